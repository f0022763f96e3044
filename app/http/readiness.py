"""/readyz: can this api process serve (Redis and the database answer)? It also reports
whether Redis still keeps the AOF production started with (a report, not a readiness
failure: every replica shares that Redis, so failing them all would stop the service)."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import text

from app.config import get_settings
from app.db import get_engine
from app.redis_client import async_redis, persistence_problem, sync_redis

logger = logging.getLogger(__name__)

CHECK_TIMEOUT_S = 2.0


async def _redis_ok() -> None:
    await async_redis().ping()  # type: ignore[misc]


def _database_ok() -> None:
    with get_engine().connect() as connection:
        connection.execute(text("SELECT 1"))


async def _state(check: asyncio.Future[None] | asyncio.Task[None], name: str) -> str:
    try:
        await asyncio.wait_for(check, CHECK_TIMEOUT_S)
    except Exception as exc:  # any failure means not ready; say which, log why
        logger.warning("readiness: %s is down (%s)", name, type(exc).__name__)
        return "down"
    return "ok"


async def readiness_checks() -> dict[str, str]:
    redis_state, database_state = await asyncio.gather(
        _state(asyncio.ensure_future(_redis_ok()), "redis"),
        _state(asyncio.ensure_future(asyncio.to_thread(_database_ok)), "database"),
    )
    return {"redis": redis_state, "database": database_state}


async def redis_persistence() -> str:
    """ "ok", "not checked" (development, or GEOSVC_REDIS_AOF_CHECK=false), or what is wrong."""
    settings = get_settings()
    if settings.is_development or not settings.redis_aof_check or settings.redis_url is None:
        return "not checked"
    try:
        problem = await asyncio.wait_for(
            asyncio.to_thread(persistence_problem, sync_redis()), CHECK_TIMEOUT_S
        )
    except Exception as exc:  # Redis down: the redis check already says so
        return f"unknown ({type(exc).__name__})"
    return problem or "ok"
