"""The usage outbox: events of successful calls, on their way to the SQL ledger.

A successful call commits its credit and appends its usage event to a Redis list in one
pipelined round trip (`service.commit_and_record`), so the event is as durable as the
counter increment it goes with and the hot path sends no Celery message of its own. The
`billing.drain_usage_outbox` task moves the list into the ledger in batches (one
transaction per 500 events); each api process asks for a drain at most every
`DRAIN_INTERVAL_S` (trailing edge, so the last event of a burst is not left behind), and
beat drains every minute as a safety net.

Draining is idempotent and crash-safe: one drain at a time holds a lock; it reads the head
of the list, inserts it (on-conflict-do-nothing by call id), commits, and only then trims
what it read. A drain that dies before the trim leaves the events to the next one, which
stores them once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Callable
from typing import cast

import redis
from pydantic import ValidationError
from sqlmodel import Session

from app.metering.keys import outbox_key, outbox_lock_key
from app.metering.ledger import record_events
from app.metering.schemas import UsageEventIn
from app.queue import enqueue

logger = logging.getLogger(__name__)

DRAIN_TASK = "billing.drain_usage_outbox"
DRAIN_BATCH = 500
DRAIN_INTERVAL_S = 0.05
LOCK_TTL_MS = 120_000

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def encode(event: UsageEventIn) -> str:
    return event.model_dump_json()


def drain(session_factory: Callable[[], Session], store: redis.Redis) -> int:
    """Move the outbox into the ledger; returns how many events were new to it.

    `session_factory()` gives a fresh SQL session (committed here, per batch).
    """
    inserted = 0
    while store.llen(outbox_key()):
        token = secrets.token_hex(8)
        if not store.set(outbox_lock_key(), token, nx=True, px=LOCK_TTL_MS):
            return inserted  # another drain is at it and will loop until the list is empty
        try:
            inserted += _drain_locked(session_factory, store)
        finally:
            store.eval(_RELEASE, 1, outbox_lock_key(), token)
    return inserted


def _drain_locked(session_factory: Callable[[], Session], store: redis.Redis) -> int:
    inserted = 0
    while raw := cast(list[str], store.lrange(outbox_key(), 0, DRAIN_BATCH - 1)):
        events = []
        for item in raw:
            try:
                events.append(UsageEventIn.model_validate(json.loads(item)))
            except (ValueError, ValidationError) as exc:
                logger.error("dropping invalid usage event %r: %s", item, exc)
        with session_factory() as session:
            inserted += record_events(session, events)
            session.commit()
        store.ltrim(outbox_key(), len(raw), -1)
    return inserted


class DrainTrigger:
    """Asks a worker to drain at most every DRAIN_INTERVAL_S, trailing edge (per loop)."""

    def __init__(self) -> None:
        self._scheduled = False
        self._last = float("-inf")

    def poke(self) -> None:
        if self._scheduled:
            return
        loop = asyncio.get_running_loop()
        self._scheduled = True
        loop.call_later(max(0.0, self._last + DRAIN_INTERVAL_S - loop.time()), self._fire)

    def _fire(self) -> None:
        self._scheduled = False
        self._last = asyncio.get_running_loop().time()
        try:
            enqueue(DRAIN_TASK)
        except Exception:  # the events stay in the outbox; beat drains them
            logger.exception("could not ask for an outbox drain")


trigger = DrainTrigger()
