"""Billing tasks (queue `billing`): the usage ledger, from event batches or the outbox.

Idempotent by call id (late acks may deliver a batch twice). Database outages and time
limits are retried with capped exponential backoff and no retry limit: usage is money,
so an event is kept until it is stored. An event that fails validation can never be
stored; it is logged and skipped, the rest of its batch is stored.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from pydantic import ValidationError
from sqlalchemy.exc import InterfaceError, OperationalError

from app.db import new_session
from app.metering.ledger import record_events
from app.metering.outbox import DRAIN_TASK, drain
from app.metering.schemas import UsageEventIn
from app.metering.service import RECORD_USAGE_TASK
from app.redis_client import sync_redis
from workers.celery_app import celery_app

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
    name=RECORD_USAGE_TASK,
    **LEDGER_WRITE_OPTIONS,
)
def record_usage_events(events: list[dict[str, Any]]) -> int:
    """Store a batch of usage events; returns how many were new."""
    valid = []
    for raw in events:
        try:
            valid.append(UsageEventIn.model_validate(raw))
        except ValidationError as exc:
            logger.error("dropping invalid usage event %r: %s", raw, exc)
    with new_session() as session:
        inserted = record_events(session, valid)
        session.commit()
    return inserted


@celery_app.task(
    name=DRAIN_TASK,
    **LEDGER_WRITE_OPTIONS,
)
def drain_usage_outbox() -> int:
    """Move the usage outbox into the ledger; returns how many events were new."""
    return drain(new_session, sync_redis())
