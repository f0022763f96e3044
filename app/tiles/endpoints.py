"""GET /v1/tiles/{z}/{x}/{y}.png: a basemap tile for a signed tile URL (app.tiles.signing)
or an API key (`Authorization: Bearer`). Free, within the tile budgets
(app.tiles.budget); errors are the envelope, never cached."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.api_keys.verify import averify_data_key
from app.deps.client import client_ip_of
from app.http.errors import error_response
from app.kit.errors import AppError, InvalidArgument, unavailable_for
from app.kit.validation import ascii_digits
from app.observability import metrics
from app.tiles import budget, service
from app.tiles.grid import TileId, tile_id
from app.tiles.signing import SIGNED_PARAMS, TILES_PATH, signed_account

# Tiles are the same for every caller: any cache may keep them for a day, and serve a
# stale one for a week while it asks again (the ETag changes only with a new basemap).
TILE_CACHE_CONTROL = "public, max-age=86400, stale-while-revalidate=604800"
NO_STORE = {"Cache-Control": "no-store"}

router = APIRouter()


@router.get(TILES_PATH + "/{z}/{x}/{y}.png", include_in_schema=False)
async def tile(request: Request, z: str, x: str, y: str) -> Response:
    try:
        return await _tile(request, z, x, y)
    except Exception as exc:  # every answer says Cache-Control, a refusal as much as a tile
        refused = exc if isinstance(exc, AppError) else unavailable_for(exc)
        if refused is None:
            raise
        return error_response(refused, request.url.path, NO_STORE)


async def _tile(request: Request, z: str, x: str, y: str) -> Response:
    await budget.count_address(client_ip_of(request.client))
    wanted = _tile_id(z, x, y)
    query = request.query_params
    if any(name in query for name in SIGNED_PARAMS):  # never half a signed URL beside a key
        account = signed_account(query.get("account"), query.get("expires"), query.get("signature"))
    else:
        account = (await averify_data_key(request.headers.get("authorization"))).user_id
    await budget.count_account(account)
    etag = service.etag(wanted)
    headers = {"ETag": etag, "Cache-Control": TILE_CACHE_CONTROL}
    if _matches(request.headers.get("if-none-match"), etag):
        metrics.tile_served("not_modified")
        return Response(status_code=304, headers=headers)
    return Response(await service.tile_png(wanted), media_type="image/png", headers=headers)


def _tile_id(z: str, x: str, y: str) -> TileId:
    numbers = []
    for name, text in (("z", z), ("x", x), ("y", y)):
        value = ascii_digits(text, max_digits=7)
        if value is None:
            raise InvalidArgument(f"{name} must be a whole number of 0 or more.", field=name)
        numbers.append(value)
    return tile_id(*numbers)


def _matches(if_none_match: str | None, etag: str) -> bool:
    if if_none_match is None:
        return False
    tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in tags or etag in tags
