"""The HTTP data API at /v1: every tool as a GET endpoint and each batch form as a POST, on
the catalogue and the metered call that /mcp uses (`app.tool_calls`), so the two surfaces
answer, limit and charge alike. Routes come from `app.v1.routes.ROUTES`, which the
OpenAPI document (`app.v1.openapi`) describes.

Each handler: authenticate (`Authorization: Bearer svc_live_ak_...`; 401 with
`WWW-Authenticate: Bearer` otherwise), read the arguments, admit (rate, concurrency,
credits), run, answer the tool's result as JSON with the limit headers
(`app.v1.headers`). Errors are the envelope `{"error": {...}}` with the status
`app.http.errors` maps them to. A client that disconnects mid-call is not charged.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from app.api_keys.verify import averify_data_key
from app.billing.entitlements import Entitlements, current_entitlements
from app.deps.client import client_ip_of
from app.geodata.batch import batch_body_items
from app.geodata.query import query_arguments
from app.http.disconnect import ClientGone, run_unless_client_gone, watch_client
from app.http.errors import error_response, product_api_status
from app.kit.clock import period_of, utcnow
from app.kit.credentials import ONE_AUTHORIZATION
from app.kit.errors import AppError, InvalidArgument, Unauthenticated, unavailable_for
from app.kit.principal import CallerPrincipal
from app.metering import retries
from app.metering.readings import MeterReading
from app.metering.service import Reservation
from app.observability import metrics
from app.request_log.service import V1_SURFACE
from app.tool_calls import images, link_budget
from app.tool_calls.batch import batch_body, call_tool_batch
from app.tool_calls.service import admit, call_tool, record_refused
from app.v1.headers import Metering, cache_control, etag_of, limit_headers, matches
from app.v1.routes import ROUTES, V1Route

# nginx's code for a request whose client closed the connection: nobody reads it, the
# access log and metrics do.
CLIENT_CLOSED = 499


async def _principal(request: Request) -> CallerPrincipal:
    if len(request.headers.getlist("authorization")) > 1:
        raise Unauthenticated(ONE_AUTHORIZATION)
    principal = await averify_data_key(request.headers.get("authorization"))
    return replace(principal, surface=V1_SURFACE)


Principal = Annotated[CallerPrincipal, Depends(_principal)]


def _json(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def _metering(
    account: Entitlements | None,
    reservation: Reservation | None,
    *,
    used: int | None = None,
    refused: AppError | None = None,
    reading: MeterReading | None = None,
) -> Metering | None:
    if account is None:
        return None
    period = reservation.period if reservation else period_of(utcnow())
    return Metering(
        plan=account.plan,
        credit_cap=account.credit_cap,
        period=period,
        used=used if used is not None else (reservation.used if reservation else None),
        key_tokens=reservation.key_tokens if reservation else None,
        account_tokens=reservation.account_tokens if reservation else None,
        refused=refused,
        reading=reading,
        granted=account.granted_now(),
    )


def _error(request: Request, exc: AppError, state: Metering | None) -> Response:
    headers = limit_headers(state) if state else {}
    return error_response(exc, request.url.path, {**headers, "Cache-Control": "no-store"})


async def _watched(request: Request, work: Callable[[], Awaitable[Any]]) -> Any:
    """`work()`, cancelled (ClientGone) if the client disconnects first."""
    async with watch_client(request):
        return await run_unless_client_gone(request, work)


def wants_json(accept: str | None) -> bool:
    """`Accept` prefers application/json to image/png (q-values count; PNG on a tie)."""

    def quality(media: str) -> float:
        best = 0.0
        for part in (accept or "").split(","):
            kind, *params = part.strip().split(";")
            if kind.strip().lower() in (media, media.split("/")[0] + "/*", "*/*"):
                q = next((p.split("=", 1)[1] for p in params if p.strip().startswith("q=")), "1")
                try:
                    best = max(best, float(q))
                except ValueError:
                    continue
        return best

    return accept is not None and quality("application/json") > quality("image/png")


async def answer_call(request: Request, principal: CallerPrincipal, route: V1Route) -> Response:
    started, admission_started = time.perf_counter(), time.monotonic()
    account: Entitlements | None = None
    try:
        account = await current_entitlements(principal.user_id)
        arguments = query_arguments(route.tool, request.query_params)
        admission = await admit(principal, route.tool, arguments)
    except AppError as exc:  # refused before anything was reserved: costs nothing
        metrics.tool_call(route.tool, metrics.outcome_of(exc), time.perf_counter() - started)
        state = _metering(account, None, refused=exc, reading=exc.reading)
        response = _error(request, exc, state)
        record_refused(principal, route.tool, exc, admission_started)
        return response
    reservation = admission.reservation
    # nginx may send this GET to the other api too (deploy/nginx.conf): charged once. The
    # header reaches here only from a configured proxy (app/http/forwarded.py).
    proxy_request_id = request.headers.get(retries.HEADER)
    admission.retry_key = retries.retry_key(
        proxy_request_id, principal.user_id, route.tool, admission.arguments
    )
    try:
        answer = await _watched(
            request, lambda: call_tool(principal, route.tool, arguments, admission)
        )
    except ClientGone:  # the call was cancelled and released
        return Response(status_code=CLIENT_CLOSED)
    except AppError as exc:
        return _error(request, exc, _metering(account, reservation, reading=exc.reading))
    state = _metering(account, reservation, used=answer.credits_used, reading=answer.reading)
    headers = limit_headers(state) if state else {}
    if route.kind == "image" and not wants_json(request.headers.get("accept")):
        png = base64.b64decode(answer.png_base64 or "")
        headers |= {"Cache-Control": "no-store", "Vary": "Accept"}
        if answer.structured.get("warnings"):  # what the image leaves out, as JSON says it
            headers["Map-Warnings"] = json.dumps(answer.structured["warnings"])
        return Response(png, media_type="image/png", headers=headers)
    structured = answer.structured
    if route.kind == "image":
        structured = {**structured, "pngBase64": answer.png_base64}
        headers["Vary"] = "Accept"
    body = _json(structured)
    headers["Cache-Control"] = cache_control(route.cacheable, structured)
    if route.cacheable:
        headers["ETag"] = etag = etag_of(body)
        if matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


async def answer_batch(request: Request, principal: CallerPrincipal, route: V1Route) -> Response:
    started = time.monotonic()
    account: Entitlements | None = None
    try:
        account = await current_entitlements(principal.user_id)
        try:
            body = json.loads(await request.body())
        except ValueError:
            raise InvalidArgument('The body must be JSON: {"items": [...]}') from None
        items = batch_body_items(body)
    except AppError as exc:
        response = _error(request, exc, _metering(account, None))
        record_refused(principal, route.tool, exc, started)
        return response
    try:
        answer = await _watched(request, lambda: call_tool_batch(principal, route.tool, items))
    except ClientGone:
        return Response(status_code=CLIENT_CLOSED)
    except AppError as exc:
        return _error(request, exc, _metering(account, None, refused=exc, reading=exc.reading))
    state = _metering(
        account,
        answer.reservation,
        used=answer.credits_used,
        refused=answer.refused,
        reading=answer.reading,
    )
    headers = {**(limit_headers(state) if state else {}), "Cache-Control": "no-store"}
    body_bytes = _json(batch_body(answer, product_api_status))
    return Response(body_bytes, media_type="application/json", headers=headers)


def _endpoint(route: V1Route) -> Callable[..., Awaitable[Response]]:
    answer = answer_batch if route.kind == "batch" else answer_call

    async def endpoint(request: Request, principal: Principal) -> Response:
        return await answer(request, principal, route)

    endpoint.__name__ = route.operation_id
    return endpoint


router = APIRouter(include_in_schema=False)  # described by app.v1.openapi instead
for _route in ROUTES:
    router.add_api_route(_route.path, _endpoint(_route), methods=[_route.method])


@router.get(images.IMAGES_PATH + "/{image_id}")
async def map_image(request: Request, image_id: str) -> Response:
    """A big map an MCP answer linked to (`app.tool_calls.images`): for a signed link, or
    the owning account's key. Costs no credit: the call that drew it paid; limited per
    client address and per link instead (`app.tool_calls.link_budget`). No answer is
    stored by a cache: a refusal or a 404 may change within seconds, the image is private."""
    try:
        png = await _map_image(request, image_id)
    except Exception as exc:  # every answer says Cache-Control, a refusal as much as a 200
        refused = exc if isinstance(exc, AppError) else unavailable_for(exc)
        if refused is None:
            raise
        return error_response(refused, request.url.path, NO_STORE)
    return Response(png, media_type="image/png", headers=NO_STORE)


NO_STORE = {"Cache-Control": "private, no-store"}


async def _map_image(request: Request, image_id: str) -> bytes:
    await link_budget.count_address(client_ip_of(request.client))
    query = request.query_params
    if "signature" in query:
        return await images.fetch(
            image_id, expires=query.get("expires"), signature=query.get("signature")
        )
    principal = await _principal(request)
    return await images.fetch(image_id, owner=principal.user_id)
