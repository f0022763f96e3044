"""Billing tasks (queue `billing`): the usage outbox into the SQL ledger, and overage
from the ledger to Stripe as meter events (`app.billing.meter_reports`).

Idempotent by call id (late acks may run a drain twice). Database outages and time
limits are retried with capped exponential backoff and no retry limit: usage is money,
so an event stays in the outbox until it is stored. An event that fails validation can
never be stored; the drain logs and skips it and stores the rest of its batch.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready
from sqlalchemy.exc import InterfaceError, OperationalError

from app.billing.meter_reports import REPORT_TASK, report_overage
from app.billing.stripe_provider import stripe_client
from app.kit.db import new_session
from app.kit.redis_client import sync_redis
from app.metering.outbox import DRAIN_TASK, ask_for_drains, drain
from app.queue import celery_app
from app.queue.celery import (
    MAINTENANCE_SOFT_TIME_LIMIT_S,
    MAINTENANCE_TIME_LIMIT_S,
    TASK_LOCK_TTL_S,
)
from app.queue.locks import single_run

logger = logging.getLogger(__name__)

# Database outages and time limits retry with capped backoff, forever: usage is money.
LEDGER_WRITE_OPTIONS: dict[str, Any] = {
    "autoretry_for": (OperationalError, InterfaceError, SoftTimeLimitExceeded),
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": None,
    "ignore_result": True,
}


@celery_app.task(
    name=DRAIN_TASK,
    **LEDGER_WRITE_OPTIONS,
)
def drain_usage_outbox(bucket: int | None = None) -> int:
    """Move one bucket of the usage outbox into the ledger; returns how many events were
    new. No bucket (beat, a message from before the buckets): a drain task is sent for
    each bucket with events waiting, so they run in parallel on the billing workers."""
    if bucket is None:
        ask_for_drains()
        return 0
    return drain(new_session, sync_redis(), bucket)


@worker_ready.connect
def drain_what_a_lost_worker_left(**_kwargs: Any) -> None:
    """A worker that starts asks for a drain: one killed mid-drain (or holding prefetched
    drain requests, up to its pool size with threads) leaves events that no later call may
    poke for; beat catches them too, but later."""
    ask_for_drains()


@celery_app.task(
    name=REPORT_TASK,
    ignore_result=False,
    soft_time_limit=MAINTENANCE_SOFT_TIME_LIMIT_S,
    time_limit=MAINTENANCE_TIME_LIMIT_S,
)
def report_meter_events() -> int:
    """Report overage to Stripe as meter events (beat, every 5 minutes); returns how many
    batches Stripe now has. No retries of its own: unsent batches wait for the next run.
    One run at a time: a second one (two beats by mistake) returns 0 and sends nothing."""
    with single_run(sync_redis(), REPORT_TASK, ttl_s=TASK_LOCK_TTL_S) as mine:
        if not mine:
            logger.info("%s skipped: another run holds its lock", REPORT_TASK)
            return 0
        return report_overage(new_session, stripe_client)
