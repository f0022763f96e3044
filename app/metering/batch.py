"""Metering a batch of calls (the batch endpoints): every item is admitted, charged and
released on its own terms, in one Redis round trip per step rather than one per item.

`reserve_batch` admits the items in order (rate tokens and credit per item, one
concurrency slot for the batch: see `RESERVE_BATCH`) and refuses the rest with the error
of the first refused one; `commit_batch` charges the items that returned data and puts
their usage events in the outbox; `release_batch` gives the others back.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import redis

from app.kit.clock import period_of, utcnow
from app.kit.config import get_settings
from app.kit.errors import AppError
from app.kit.redis_client import async_redis
from app.metering import alerts, outbox, recent_refusals
from app.metering.keys import (
    outbox_bucket,
    outbox_key,
    test_account_bucket_key,
    test_counter_key,
)
from app.metering.refusals import credit_limit, refusal, test_refusal
from app.metering.schemas import UsageEventIn
from app.metering.scripts import (
    GRANTED,
    commit_many_script,
    release_many_script,
    reserve_batch_script,
)
from app.metering.service import (
    CREDITS_PER_CALL,
    Reservation,
    admission_arguments,
    counter_ttl_s,
    run_admission,
)
from app.observability import metrics
from app.plans import Plan, limits_for

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchReservation:
    """The first `len(admitted)` items of a batch, admitted; the others refused with
    `refused` (None when every item was admitted)."""

    admitted: list[Reservation]
    refused: AppError | None


async def reserve_batch(
    user_id: str,
    plan: Plan,
    items: int,
    *,
    key_id: str | None = None,
    credit_cap: int | None = None,
    granted: int = 0,
    now: datetime | None = None,
    test: bool = False,
) -> BatchReservation:
    """Admit up to `items` calls of cost 1 in one Lua call (see `RESERVE_BATCH`).
    `test`: a test-mode key's batch, on the test counter and buckets only (see
    `app.metering.service.reserve`)."""
    if key_id is not None and not test:  # refused a moment ago: none admitted, no Redis call
        try:
            recent_refusals.check(user_id, key_id, plan, calls=items)
        except AppError as exc:
            return BatchReservation([], exc)
    period = period_of(now or utcnow())
    limits = limits_for(plan)
    limit = get_settings().test_key_monthly_calls if test else credit_limit(plan, credit_cap)
    prefix = "res_" + secrets.token_hex(10)
    keys, args = admission_arguments(user_id, period, key_id, prefix, limits, limit, items)
    if test:
        counter = test_counter_key(user_id, period)
        keys[:2] = [counter, counter + ":res"]
        keys[3] = test_account_bucket_key(user_id)
        args[4] = 0  # a missing test counter is 0: the ledger never holds test calls
    reply = await run_admission(reserve_batch_script, user_id, period, keys, args)
    status, count, used, in_flight, wait_ms, key_tokens, account_tokens = map(int, reply)
    refused: AppError | None = None
    if status != GRANTED and test:
        refused = test_refusal(status, plan, limits, limit or 0, used, wait_ms, period, cost=1)
    elif status != GRANTED:
        if key_id is not None:  # its wait is for one more token
            recent_refusals.remember(user_id, key_id, status, wait_ms, 1)
        refused = refusal(
            status,
            plan,
            limits,
            credit_cap,
            used,
            in_flight,
            wait_ms,
            period,
            cost=1,
            calls=items - count,
            granted=granted,
        )
    admitted = [
        Reservation(
            reservation_id=f"{prefix}:{index}",
            user_id=user_id,
            period=period,
            plan=plan,
            used=used + index - 1,
            credit_limit=limit,
            key_tokens=key_tokens,
            account_tokens=account_tokens,
            granted=granted,
            test=test,
        )
        for index in range(1, count + 1)
    ]
    for _ in admitted:
        metrics.reservation_opened()
    return BatchReservation(admitted, refused)


async def commit_batch(
    reservations: Sequence[Reservation],
    *,
    call_ids: Sequence[str],
    key_id: str | None,
    tool: str,
) -> int | None:
    """Charge these reservations (one account, one period) and record their usage events,
    in one pipelined round trip. Returns the credits used in the period after them (None
    when there was nothing to commit)."""
    if not reservations:
        return None
    first = reservations[0]
    user_id, period = first.user_id, first.period
    now = utcnow()
    events = [
        outbox.encode(
            UsageEventIn(
                call_id=call_id,
                user_id=user_id,
                key_id=key_id,
                tool=tool,
                credits=CREDITS_PER_CALL,
                period=period,
                created_at=now,
            )
        )
        for call_id in call_ids
    ]
    keys = first.counter_keys
    # Test calls claim no usage alert (a quota of 0) and have no usage events.
    warning, quota = (0, 0) if first.test else alerts.thresholds(first.plan)
    args: list[str | int] = [CREDITS_PER_CALL, counter_ttl_s(period), warning, quota]
    args += [r.reservation_id for r in reservations]
    async with async_redis().pipeline(transaction=False) as pipe:
        pipe.eval(commit_many_script.source, len(keys), *keys, *args)
        if not first.test:
            pipe.rpush(outbox_key(outbox_bucket(first.user_id)), *events)
        replies = await pipe.execute(raise_on_error=False)
    if isinstance(replies[0], Exception):  # the commit itself: the caller decides
        raise replies[0]
    recent_refusals.slot_freed(user_id)
    if not first.test and isinstance(replies[1], Exception):  # counted: push them again
        await outbox.push_again(outbox_bucket(user_id), events, replies[1])
    live, used, alert = replies[0]
    for _ in reservations:
        metrics.reservation_committed(CREDITS_PER_CALL)
    if int(live) < len(reservations):
        logger.warning(
            "commit of %d expired or unknown reservations of %s (%s): counted anyway",
            len(reservations) - int(live),
            user_id,
            period,
        )
    if not first.test:
        outbox.trigger.poke(outbox_bucket(first.user_id))
    if alert:  # the batch took the account into warning or to its quota (rare)
        alerts.announce(user_id, period, first.plan, int(alert))
    return int(used)


async def release_batch(reservations: Sequence[Reservation]) -> None:
    """These calls failed or were abandoned: their credits are returned (cost 0); with
    Redis unreachable the reservations are left to expire (see `service.release`)."""
    if not reservations:
        return
    first = reservations[0]
    keys = first.counter_keys
    try:
        await release_many_script.run_async(
            async_redis(), keys, [r.reservation_id for r in reservations]
        )
    except redis.RedisError as exc:
        logger.warning("%d reservations left to expire: %s", len(reservations), exc)
    recent_refusals.slot_freed(first.user_id)
    for _ in reservations:
        metrics.reservation_closed()
