"""Tiles already drawn: an in-process LRU (the warm path: no Redis, no worker) over a
Redis copy every api process shares. Tiles are the same for every caller, so a key names
only the index version, the style and the tile."""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Mapping

from redis.asyncio.client import Pipeline as AsyncPipeline

from app.geodata.indices.version import INDEX_VERSION
from app.kit.config import get_settings
from app.kit.redis_client import async_redis
from app.tiles.grid import TILE_STYLE, TileId


class TileLru:
    """At most `max_bytes` of PNGs, least recently used out first."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._tiles: OrderedDict[TileId, bytes] = OrderedDict()
        self._bytes = 0

    def get(self, tile: TileId) -> bytes | None:
        png = self._tiles.get(tile)
        if png is not None:
            self._tiles.move_to_end(tile)
        return png

    def put(self, tile: TileId, png: bytes) -> None:
        if len(png) > self.max_bytes:
            return
        old = self._tiles.pop(tile, None)
        if old is not None:
            self._bytes -= len(old)
        self._tiles[tile] = png
        self._bytes += len(png)
        while self._bytes > self.max_bytes:
            _evicted, evicted_png = self._tiles.popitem(last=False)
            self._bytes -= len(evicted_png)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._tiles)


_lru: TileLru | None = None


def lru() -> TileLru:
    global _lru
    max_bytes = get_settings().tile_cache_bytes
    if _lru is None or _lru.max_bytes != max_bytes:
        _lru = TileLru(max_bytes)
    return _lru


def redis_key(tile: TileId) -> str:
    prefix = get_settings().redis_key_prefix
    return f"{prefix}tile:{INDEX_VERSION}:{TILE_STYLE}:{tile.path}"


async def read(tile: TileId) -> bytes | None:
    stored = await async_redis().get(redis_key(tile))
    return None if stored is None else base64.b64decode(stored)


def write_all(pipe: AsyncPipeline, tiles: Mapping[TileId, bytes]) -> None:
    ttl_s = get_settings().tile_cache_ttl_s
    for tile, png in tiles.items():
        pipe.set(redis_key(tile), base64.b64encode(png).decode(), ex=ttl_s)
