"""The usage outbox: events of successful calls, on their way to the SQL ledger.

A successful call commits its credit and appends its usage event to a Redis list in one
pipelined round trip (`service.send_commit`), so the event is as durable as the
counter increment it goes with and the hot path sends no Celery message of its own. The
`billing.drain_usage_outbox` task moves the list into the ledger in batches (one
transaction per 500 events); each api process asks for a drain at most every
`DRAIN_INTERVAL_S` (trailing edge, so the last event of a burst is not left behind), and
beat looks every 5 s and asks for a drain when events wait (`pending`), as a safety net.

The outbox is `GEOSVC_OUTBOX_BUCKETS` lists (an account's events always go to the same
one, `keys.outbox_bucket`), each drained by its own task under its own lock, so drains
run in parallel and, on a Redis Cluster, each list lives on some shard: drains scale with
the shards. A drain task names its bucket; one with none (beat's, a starting worker's)
asks for a drain of each bucket with events waiting.

Draining is idempotent and crash-safe: one drain per bucket at a time holds a short lock (5 s,
renewed every second while it runs); it reads the head of the list, inserts it
(on-conflict-do-nothing by call id), commits, and only then trims what it read, and only
while it still holds the lock. A drain that dies leaves the events to the next one, which
stores them once; its lock is gone within 5 s. A drain that finds the lock taken waits
for it instead of giving up, so a request to drain a non-empty outbox is never dropped.

What a Redis crash can lose: the outbox and the counters are as durable as Redis's AOF.
Production refuses to start without `appendonly yes` and `appendfsync everysec` (at most
about one second of events lost) or `always` (none); see docs/OPERATIONS.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import redis
from pydantic import ValidationError
from sqlmodel import Session

from app.kit.clock import as_utc, utcnow
from app.kit.config import get_settings
from app.kit.redis_client import async_redis, sync_redis
from app.metering.keys import legacy_outbox_keys, outbox_key, outbox_lock_key
from app.metering.ledger import mark_keys_used, record_events
from app.metering.schemas import UsageEventIn
from app.observability import metrics
from app.queue import enqueue

logger = logging.getLogger(__name__)

DRAIN_TASK = "billing.drain_usage_outbox"
DRAIN_BATCH = 500
# Each drain is a task, a lock, a transaction: every 0.5 s keeps that off the per-call cost.
DRAIN_INTERVAL_S = 0.5
# A dead drainer blocks the outbox for at most LOCK_TTL_MS; a live one renews the lock.
LOCK_TTL_MS = 5_000
LOCK_RENEW_S = 1.0

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_TRIM = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('LTRIM', KEYS[2], tonumber(ARGV[2]), -1)
return 1
"""


def encode(event: UsageEventIn) -> str:
    return event.model_dump_json()


async def push_again(bucket: int, events: list[str], failure: Exception) -> None:
    """A commit counted but its events' push failed (on a cluster the outbox may sit on
    another node): push them once more. The ledger keeps one event per call id, so a push
    that had landed after all costs nothing; a lost one leaves the counter ahead of the
    ledger until reconciliation."""
    try:
        await async_redis().rpush(outbox_key(bucket), *events)  # type: ignore[misc]
    except (redis.RedisError, redis.RedisClusterException) as exc:
        logger.error("%d usage event(s) lost (%s, then %s)", len(events), failure, exc)
        return
    trigger.poke(bucket)


@dataclass(frozen=True)
class _Outbox:
    """One list of events and the lock of its drain (on one slot of a cluster)."""

    events: str
    lock: str


def _outboxes(bucket: int) -> list[_Outbox]:
    """What bucket `bucket`'s drain empties: its list, and bucket 0's also the list of
    versions before the buckets (never on a cluster, where it cannot exist: it is new)."""
    boxes = [_Outbox(outbox_key(bucket), outbox_lock_key(bucket))]
    if bucket == 0 and not get_settings().redis_cluster:
        boxes.insert(0, _Outbox(*legacy_outbox_keys()))
    return boxes


def buckets() -> range:
    return range(get_settings().outbox_buckets)


def drain(session_factory: Callable[[], Session], store: redis.Redis, bucket: int = 0) -> int:
    """Move one bucket of the outbox into the ledger; returns how many events were new.

    `session_factory()` gives a fresh SQL session (committed here, per batch). A live
    drain already at it (its lock freshly renewed) is left alone: it loops until the list
    is empty, checking again after it lets go. A lock that is not being renewed belongs
    to a dead drain: this one waits the few seconds until it expires and takes over.
    """
    return sum(_drain_box(session_factory, store, box) for box in _outboxes(bucket))


def _drain_box(session_factory: Callable[[], Session], store: redis.Redis, box: _Outbox) -> int:
    inserted = 0
    while store.llen(box.events):
        token = secrets.token_hex(8)
        if not store.set(box.lock, token, nx=True, px=LOCK_TTL_MS):
            if _holder_is_alive(store, box):
                return inserted
            continue
        renewal = _LockRenewal(store, box, token)
        try:
            inserted += _drain_locked(session_factory, store, box, token)
        finally:
            renewal.stop()
            store.eval(_RELEASE, 1, box.lock, token)
    return inserted


def waiting_buckets(store: redis.Redis | None = None) -> list[int]:
    """The buckets with events waiting (one pipelined LLEN each, the legacy list with 0)."""
    store = store or sync_redis()
    names = [[box.events for box in _outboxes(bucket)] for bucket in buckets()]
    with store.pipeline(transaction=False) as pipe:
        for lists in names:
            for name in lists:
                pipe.llen(name)
        depths = iter(pipe.execute())
    return [bucket for bucket, lists in zip(buckets(), names, strict=True)
            if sum(int(next(depths)) for _name in lists)]  # fmt: skip


def _holder_is_alive(store: redis.Redis, box: _Outbox) -> bool:
    """True when the lock was renewed lately; else wait (< LOCK_TTL_MS) until it is gone."""
    while True:
        ttl = cast(int, store.pttl(box.lock))
        if ttl < 0:  # gone (-2), or no expiry (-1: not ours to judge; take it as alive)
            return ttl == -1
        if ttl > LOCK_TTL_MS - 2_000 * LOCK_RENEW_S:
            return True
        time.sleep(min(0.25, ttl / 1000 + 0.01))


class _LockRenewal:
    """Extends the drain lock every LOCK_RENEW_S while the drain runs (a slow database
    batch keeps it), so the lock can be short: a dead drainer holds it LOCK_TTL_MS."""

    def __init__(self, store: redis.Redis, box: _Outbox, token: str) -> None:
        self._store = store
        self._lock = box.lock
        self._token = token
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="outbox-lock", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(LOCK_RENEW_S):
            try:
                if not self._store.eval(_RENEW, 1, self._lock, self._token, LOCK_TTL_MS):
                    return
            except redis.RedisError:
                logger.warning("could not renew the outbox drain lock")

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()


def _drain_locked(
    session_factory: Callable[[], Session], store: redis.Redis, box: _Outbox, token: str
) -> int:
    inserted = 0
    while raw := cast(list[str], store.lrange(box.events, 0, DRAIN_BATCH - 1)):
        events = []
        for item in raw:
            try:
                events.append(UsageEventIn.model_validate(json.loads(item)))
            except (ValueError, ValidationError) as exc:
                logger.error("dropping invalid usage event %r: %s", item, exc)
        with session_factory() as session:
            inserted += record_events(session, events)
            mark_keys_used(session, events)
            session.commit()
        metrics.ledger_drained(event.created_at for event in events)
        # Trim only while still the holder: had the lock expired, another drain read the
        # same head and trims it itself (trimming here too would drop unread events).
        if not store.eval(_TRIM, 2, box.lock, box.events, token, len(raw)):
            logger.warning("outbox drain lost its lock; leaving the trim to the new holder")
            return inserted
    return inserted


def pending() -> bool:
    """Whether events wait in the outbox (beat's safety net asks every 5 s)."""
    return bool(waiting_buckets())


@dataclass(frozen=True)
class OutboxStats:
    depth: int
    oldest_age_s: float | None  # None when empty


def outbox_stats(store: redis.Redis | None = None) -> OutboxStats:
    """Events waiting for the ledger (every bucket) and the age of the oldest among the
    heads of the lists (for /metrics)."""
    store = store or sync_redis()
    lists = [box.events for bucket in buckets() for box in _outboxes(bucket)]
    with store.pipeline(transaction=False) as pipe:
        for name in lists:
            pipe.llen(name)
            pipe.lindex(name, 0)
        replies = pipe.execute()
    depth = sum(int(n) for n in replies[0::2])
    ages = [age for head in replies[1::2] if (age := _age(head)) is not None]
    return OutboxStats(depth, max(ages) if ages else None)


def _age(head: str | None) -> float | None:
    if head is None:
        return None
    try:
        created = UsageEventIn.model_validate(json.loads(head)).created_at
    except (ValueError, ValidationError):
        return None
    return max(0.0, (utcnow() - as_utc(created)).total_seconds())


def ask_for_drains() -> None:
    """A drain task for each bucket with events waiting (where a drain with no bucket
    goes: beat's safety net, a starting worker, a finished job)."""
    for bucket in waiting_buckets():
        enqueue(DRAIN_TASK, bucket)


class DrainTrigger:
    """Asks a worker to drain at most every DRAIN_INTERVAL_S, trailing edge (per loop),
    one drain task for each bucket that got events since the last ask.

    The publish runs in a thread, one at a time: Celery's publish blocks, and on a paused
    (not dead) Redis broker it would block the event loop, and every request with it,
    until the broker came back."""

    def __init__(self) -> None:
        self._scheduled = False
        self._publishing = False
        self._poked_meanwhile = False
        self._last = float("-inf")
        self._dirty: set[int] = set()

    def poke(self, bucket: int = 0) -> None:
        self._dirty.add(bucket)
        if self._scheduled:
            return
        if self._publishing:  # ask again once this publish is done
            self._poked_meanwhile = True
            return
        loop = asyncio.get_running_loop()
        self._scheduled = True
        loop.call_later(max(0.0, self._last + DRAIN_INTERVAL_S - loop.time()), self._fire)

    def _fire(self) -> None:
        loop = asyncio.get_running_loop()
        self._scheduled, self._publishing, self._last = False, True, loop.time()
        dirty, self._dirty = sorted(self._dirty), set()
        future = loop.run_in_executor(None, self._publish, dirty)
        future.add_done_callback(self._published)

    def _published(self, _done: asyncio.Future[None]) -> None:
        self._publishing = False
        if self._poked_meanwhile:
            self._poked_meanwhile = False
            self.poke(min(self._dirty, default=0))  # the others are in `_dirty` already

    @staticmethod
    def _publish(dirty: list[int]) -> None:
        try:
            for bucket in dirty:
                enqueue(DRAIN_TASK, bucket)
        except Exception:  # the events stay in the outbox; beat drains them
            logger.exception("could not ask for an outbox drain")


trigger = DrainTrigger()
