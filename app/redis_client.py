"""Redis clients from Settings.

With no `GEOSVC_REDIS_URL` the process uses an in-process fakeredis server: enough for
one-process tools and tests. `geosvc dev` instead starts a local Redis (or a fakeredis TCP
server) and sets the URL, so the API, Celery and beat share one real protocol path.
"""

from __future__ import annotations

from functools import lru_cache

import fakeredis
import redis
import redis.asyncio as aioredis

from app.config import get_settings


@lru_cache
def _fake_server() -> fakeredis.FakeServer:
    return fakeredis.FakeServer()


@lru_cache
def sync_redis() -> redis.Redis:
    url = get_settings().redis_url
    if url is None:
        return fakeredis.FakeRedis(server=_fake_server(), decode_responses=True)
    return redis.Redis.from_url(url, decode_responses=True)


@lru_cache
def sync_redis_bytes() -> redis.Redis:
    """For binary values (the upstream answer cache)."""
    url = get_settings().redis_url
    if url is None:
        return fakeredis.FakeRedis(server=_fake_server())
    return redis.Redis.from_url(url)


@lru_cache
def async_redis() -> aioredis.Redis:
    url = get_settings().redis_url
    if url is None:
        return fakeredis.FakeAsyncRedis(server=_fake_server(), decode_responses=True)
    return aioredis.Redis.from_url(url, decode_responses=True)


def reset_clients() -> None:
    """Forget cached clients (after Settings change, e.g. in tests)."""
    sync_redis.cache_clear()
    sync_redis_bytes.cache_clear()
    async_redis.cache_clear()
