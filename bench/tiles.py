"""CPU per map tile at zoom 10, cold (drawn) and warm (served from the api's cache).

Cold: a tools worker draws the tile's whole metatile (4x4 tiles, app/tiles/grid.py) and
cuts it; CPU (time.process_time) per metatile over --views metatiles on land, in a
process that has drawn one before (fonts and sprites loaded, as in a running worker),
reported per metatile (what the first request for an area waits for) and per tile (what
each of the 16 tiles a map then asks for costs).

Warm: the api answering a signed tile URL for a tile in its LRU: the ASGI app itself
(create_app, in this process, no lifespan, fakeredis for the budgets), called through
httpx's ASGI transport; CPU per request over --requests requests, the client's share
included (so the api's own is less).

    .venv/bin/python bench/tiles.py [--views 30] [--requests 2000]

Goals (issue 53): p50 <= 10 ms cold, <= 1 ms warm.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GEOSVC_DATA_DIR", str(ROOT / ".geosvc"))
os.environ.pop("GEOSVC_REDIS_URL", None)  # fakeredis in this process: no shared Redis

import httpx  # noqa: E402

from app.geodata.rendering.mercator import world_x, world_y  # noqa: E402
from app.kit.config import get_settings  # noqa: E402
from app.tiles import cache  # noqa: E402
from app.tiles.drawing import draw_metatile  # noqa: E402
from app.tiles.grid import TileId, metatile_of, tile_id  # noqa: E402
from app.tiles.signing import grant  # noqa: E402

ZOOM = 10
# Land in populated places, where names and coasts make tiles dearest.
AREAS = [
    (40.7, -74.0),
    (51.5, -0.1),
    (48.9, 2.3),
    (35.7, 139.7),
    (37.8, -122.4),
    (-33.9, 151.2),
    (19.4, -99.1),
    (52.5, 13.4),
    (41.0, 29.0),
    (-23.5, -46.6),
]


def cold(views: int) -> tuple[list[float], list[float]]:
    random.seed(53)
    metatiles = []
    for i in range(views + 1):
        lat, lon = AREAS[i % len(AREAS)]
        lat, lon = lat + random.uniform(-1, 1), lon + random.uniform(-1, 1)
        side = 1 << ZOOM
        metatiles.append(
            metatile_of(tile_id(ZOOM, int(world_x(lon) * side), int(world_y(lat) * side)))
        )
    draw_metatile(metatiles.pop())  # warm the fonts and sprites, as a running worker has
    per_metatile = []
    for metatile in metatiles:
        start = time.process_time()
        tiles = draw_metatile(metatile)
        per_metatile.append((time.process_time() - start) * 1000)
        assert len(tiles) == 16
    return per_metatile, [ms / 16 for ms in per_metatile]


async def warm(requests: int) -> list[float]:
    from app.main import create_app

    app = create_app()
    tile = TileId(ZOOM, 301, 385)
    cache.lru().put(tile, draw_metatile(metatile_of(tile))[tile])
    url = grant("usr_bench").url_template.format(z=tile.z, x=tile.x, y=tile.y)
    path = url.split(get_settings().base_url.rstrip("/"), 1)[1]
    transport = httpx.ASGITransport(app=app)
    times = []
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        for _ in range(50):
            assert (await client.get(path)).status_code == 200
        for _ in range(requests):
            start = time.process_time()
            response = await client.get(path)
            times.append((time.process_time() - start) * 1000)
            assert response.status_code == 200, response.text
    return times


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--views", type=int, default=30)
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    # the budgets must not refuse the bench's own requests
    os.environ["GEOSVC_TILE_FETCHES_PER_IP"] = os.environ["GEOSVC_TILE_FETCHES_PER_ACCOUNT"] = str(
        10 * args.requests
    )
    get_settings.cache_clear()
    per_metatile, per_tile = cold(args.views)
    print(f"cold z{ZOOM}, {args.views} metatiles of 16 tiles (CPU ms):")
    print(
        f"  per metatile  p50 {statistics.median(per_metatile):6.1f}  "
        f"p90 {p(per_metatile, 90):6.1f}"
    )
    print(
        f"  per tile      p50 {statistics.median(per_tile):6.2f}  p90 {p(per_tile, 90):6.2f}"
        "  (goal p50 <= 10)"
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the client's line per request
    times = asyncio.run(warm(args.requests))
    print(f"warm z{ZOOM}, {args.requests} signed requests through the ASGI app (CPU ms):")
    print(
        f"  per request   p50 {statistics.median(times):6.3f}  p90 {p(times, 90):6.3f}"
        "  (goal p50 <= 1, client included)"
    )


if __name__ == "__main__":
    main()
