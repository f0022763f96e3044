"""Billing tasks (queue `billing`): the usage outbox into the SQL ledger.

Idempotent by call id (late acks may run a drain twice). Database outages and time
limits are retried with capped exponential backoff and no retry limit: usage is money,
so an event stays in the outbox until it is stored. An event that fails validation can
never be stored; the drain logs and skips it and stores the rest of its batch.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy.exc import InterfaceError, OperationalError

from app.db import new_session
from app.metering.outbox import DRAIN_TASK, drain
from app.queue import celery_app
from app.redis_client import sync_redis

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
def drain_usage_outbox() -> int:
    """Move the usage outbox into the ledger; returns how many events were new."""
    return drain(new_session, sync_redis())
