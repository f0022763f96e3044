"""/readyz: can this api process serve (Redis and the database answer)?"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import text

from app.db import get_engine
from app.redis_client import async_redis

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
