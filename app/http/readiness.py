"""/readyz: can this api process serve (Redis and the database answer)? It also reports
whether Redis still keeps the AOF production started with, and which tool queues some
worker can answer (reports, not readiness failures: every replica shares that Redis and
those workers, so failing them all would stop the service)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from sqlalchemy import text

from app.kit.config import get_settings
from app.kit.db import get_engine
from app.kit.redis_client import async_redis, persistence_problem, sync_redis
from app.queue import tool_workers
from app.queue.celery import TOOL_QUEUES

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


async def tool_workers_report(index_version: int) -> dict[str, Any]:
    """Which tool queues some worker can answer (a fresh announcement with this release's
    index version: app.queue.tool_workers). A report, not a readiness failure: the control
    plane, the dashboard and sign-in serve without workers, and every replica would fail
    together. `state` is "ok" or says which queues no worker can answer."""
    try:
        workers = await asyncio.wait_for(
            asyncio.to_thread(tool_workers.live_workers, sync_redis()), CHECK_TIMEOUT_S
        )
    except Exception as exc:  # Redis down: the redis check already says so
        return {"state": f"unknown ({type(exc).__name__})"}
    counts = tool_workers.answering(workers, TOOL_QUEUES, index_version)
    unanswered = [queue for queue, count in counts.items() if count == 0]
    state = f"no worker can answer {', '.join(unanswered)}" if unanswered else "ok"
    datasets = sorted({json.dumps(worker.data.datasets, sort_keys=True) for worker in workers})
    return {"state": state, "queues": counts, "datasets": [json.loads(d) for d in datasets]}
