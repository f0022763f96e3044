"""A tile for the endpoint: from this process's LRU, else Redis, else drawn by a tools
worker (docs/HTTP_API.md, "Map tiles", why there). Concurrent requests for tiles of one
metatile that is not drawn yet wait for one drawing."""

from __future__ import annotations

import asyncio
import base64

from app.geodata.indices.version import INDEX_VERSION
from app.kit.config import get_settings
from app.kit.errors import Internal
from app.kit.redis_client import async_redis
from app.observability import metrics
from app.queue.replies import waiter
from app.tiles import cache
from app.tiles.grid import TILE_STYLE, Metatile, TileId, metatile_of

DRAW_TASK = "tools.draw_tiles"  # the tools queues' prefix: only tools workers hold the basemap

_drawing: dict[Metatile, asyncio.Future[dict[TileId, bytes]]] = {}


def etag(tile: TileId) -> str:
    """Known before the tile is read: it changes only with the basemap or the drawing."""
    return f'"t{INDEX_VERSION}.{TILE_STYLE}.{tile.z}.{tile.x}.{tile.y}"'


async def tile_png(tile: TileId) -> bytes:
    lru = cache.lru()
    png = lru.get(tile)
    if png is not None:
        metrics.tile_served("memory")
        return png
    png = await cache.read(tile)
    source = "redis"
    if png is None:
        png, source = (await _drawn(metatile_of(tile)))[tile], "drawn"
    lru.put(tile, png)
    metrics.tile_served(source)
    return png


async def _drawn(metatile: Metatile) -> dict[TileId, bytes]:
    pending = _drawing.get(metatile)
    if pending is not None:
        return await asyncio.shield(pending)
    future: asyncio.Future[dict[TileId, bytes]] = asyncio.get_running_loop().create_future()
    _drawing[metatile] = future
    try:
        tiles = await _draw(metatile)
    except BaseException as exc:
        future.set_exception(exc)
        future.exception()  # retrieved: no "never retrieved" warning when nobody else waited
        raise
    finally:
        _drawing.pop(metatile, None)
    future.set_result(tiles)
    return tiles


async def _draw(metatile: Metatile) -> dict[TileId, bytes]:
    results = waiter()
    answer = await results.run_task(
        results.new_task_id("tiles"),
        DRAW_TASK,
        [metatile.z, metatile.x0, metatile.y0, metatile.size],
        deadline_s=get_settings().tool_deadline_s,
    )
    encoded = answer.get("tiles")
    if not isinstance(encoded, dict):
        raise Internal("The tile worker answered no tiles")
    tiles = {_parse(path): base64.b64decode(png) for path, png in encoded.items()}
    pipe = async_redis().pipeline(transaction=False)
    cache.write_all(pipe, tiles)
    await pipe.execute()
    lru = cache.lru()
    for tile, png in tiles.items():
        lru.put(tile, png)
    return tiles


def _parse(path: str) -> TileId:
    z, x, y = (int(part) for part in path.split("/"))
    return TileId(z, x, y)
