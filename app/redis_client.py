"""Redis clients from Settings.

With no `GEOSVC_REDIS_URL` the process uses an in-process fakeredis server: enough for
one-process tools and tests. `geosvc dev` instead starts a local Redis (or a fakeredis TCP
server) and sets the URL, so the API, Celery and beat share one real protocol path.
"""

from __future__ import annotations

from functools import lru_cache
from typing import cast

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
    """For binary values (the upstream answer cache). Timeouts bound a read the api makes
    on its event loop; a failed cache read counts as a miss."""
    url = get_settings().redis_url
    if url is None:
        return fakeredis.FakeRedis(server=_fake_server())
    return redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)


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


def persistence_problem(client: redis.Redis) -> str | None:
    """Why a crash of this Redis could lose more than about a second of usage events
    (the outbox and the counters live there until drained), or None when it keeps an AOF
    with `appendfsync everysec` or `always`."""
    try:
        config = cast(dict[str, str], client.config_get("append*"))
    except redis.RedisError as exc:
        return (
            f"cannot read the Redis persistence settings ({exc}); set GEOSVC_REDIS_AOF_CHECK"
            "=false only for a managed Redis whose AOF you have verified otherwise"
        )
    appendonly, fsync = config.get("appendonly"), config.get("appendfsync")
    if appendonly != "yes":
        return (
            "Redis runs without AOF (appendonly no): a crash would lose every usage event "
            "not yet in the ledger; run it with appendonly yes, appendfsync everysec "
            "(or always), or set GEOSVC_REDIS_AOF_CHECK=false"
        )
    if fsync not in ("everysec", "always"):
        return (
            f"Redis AOF is fsynced only by the OS (appendfsync {fsync}); use appendfsync "
            "everysec or always, or set GEOSVC_REDIS_AOF_CHECK=false"
        )
    return None


def require_persistent_redis() -> None:
    """Production start-up: refuse a Redis that could lose more than ~1 s of events."""
    settings = get_settings()
    if settings.is_development or not settings.redis_aof_check or settings.redis_url is None:
        return
    problem = persistence_problem(sync_redis())
    if problem is not None:
        raise SystemExit(f"refusing to start with GEOSVC_ENV=production: {problem}")
