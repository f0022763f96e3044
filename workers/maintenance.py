"""Beat tasks (queue `billing`): monthly rollover and ledger reconciliation.

Thin: parse, call the service, commit. `now` (ISO 8601) is injectable so tests can run
them at a frozen instant; beat sends none and the worker's clock is used.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from celery.signals import beat_init

from app.kit.clock import as_utc, iso_ms, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.redis_client import sync_redis
from app.metering.reconcile import RECONCILE_TASK
from app.metering.reconcile import reconcile as reconcile_usage
from app.metering.rollover import ROLLOVER_TASK, finalise_periods
from app.queue import celery_app
from app.queue.celery import (
    MAINTENANCE_SOFT_TIME_LIMIT_S,
    MAINTENANCE_TIME_LIMIT_S,
    TASK_LOCK_TTL_S,
)
from app.queue.locks import single_run

logger = logging.getLogger(__name__)


def _moment(now: str | None) -> datetime:
    return as_utc(datetime.fromisoformat(now)) if now else utcnow()


@celery_app.task(
    name=ROLLOVER_TASK,
    soft_time_limit=MAINTENANCE_SOFT_TIME_LIMIT_S,
    time_limit=MAINTENANCE_TIME_LIMIT_S,
)
def rollover(now: str | None = None, settle_s: float | None = None) -> dict[str, Any]:
    """Finalise the previous period of every account with usage (once).

    Inside the settle window after midnight it re-schedules itself for its end.
    """
    moment = _moment(now)
    settle = get_settings().reservation_ttl_s if settle_s is None else settle_s
    with single_run(sync_redis(), ROLLOVER_TASK, ttl_s=TASK_LOCK_TTL_S) as mine:
        if not mine:
            # the holder finalises and, inside the settle window, schedules the re-run
            logger.info("%s skipped: another run holds its lock", ROLLOVER_TASK)
            return {"finalised": 0, "settleAt": None, "skipped": True}
        with new_session() as session:
            result = finalise_periods(session, now=moment, settle_s=settle)
            session.commit()
    for user_id, period in result.finalised:
        logger.info("finalised %s %s", user_id, period)
    if result.settle_at is not None:
        rollover.apply_async(
            kwargs={"now": iso_ms(result.settle_at) if now else None, "settle_s": settle_s},
            countdown=(result.settle_at - moment).total_seconds(),
        )
    return {
        "finalised": len(result.finalised),
        "settleAt": iso_ms(result.settle_at) if result.settle_at else None,
    }


@beat_init.connect
def catch_up_rollover(**_kwargs: Any) -> None:
    """A beat that starts sends one rollover. Beat runs a missed crontab once at start only
    when its schedule file survived; one started afresh (a new host, a lost volume) after
    being down over midnight on the 1st would otherwise wait a month. Finalising is once
    per account and period, so an extra run costs one query."""
    celery_app.send_task(ROLLOVER_TASK)


@celery_app.task(
    name=RECONCILE_TASK,
    soft_time_limit=MAINTENANCE_SOFT_TIME_LIMIT_S,
    time_limit=MAINTENANCE_TIME_LIMIT_S,
)
def reconcile(now: str | None = None) -> dict[str, Any]:
    """Ledger totals -> Redis counters for the current period, repairing drift."""
    with new_session() as session:
        result = reconcile_usage(session, sync_redis(), now=_moment(now))
    return {
        "period": result.period,
        "checked": result.checked,
        "repairs": [
            {"userId": r.user_id, "before": r.before, "after": r.after} for r in result.repairs
        ],
    }
