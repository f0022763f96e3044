"""Credit metering: reserve, commit and release against Redis; the ledger; usage reads.

The hot path (reserve, commit, release) is one Lua call each on the account's keys; see
`app.metering.scripts` for how reservations expire by themselves. Redis is the fast path
that enforces the free cap; the SQL ledger (`usage_events`, filled from the usage outbox
by the `billing` Celery task, see `app.metering.outbox`) is the truth, and reconciliation
keeps the two equal.

A commit always counts, even when its reservation already expired or is unknown: the
call succeeded and its usage event goes to the ledger anyway, so skipping it in Redis
would only make the counter disagree with the ledger until reconciliation. Expiry cannot
normally happen first (the api abandons a call after `tool_deadline_s`, well under
`reservation_ttl_s`); when it does, a free account may end at most that many credits
past its cap. Such commits are logged.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import redis
from redis.asyncio.client import Pipeline as AsyncPipeline

from app.kit.clock import period_end, period_of, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.redis_client import LuaScript, async_redis, send_now
from app.metering import alerts, outbox, recent_refusals, retries
from app.metering.keys import (
    account_bucket_key,
    counter_key,
    key_bucket_key,
    once_key,
    outbox_bucket,
    outbox_key,
    reservations_key,
    test_account_bucket_key,
    test_counter_key,
)
from app.metering.ledger import ledger_total
from app.metering.readings import MeterReading
from app.metering.refusals import credit_limit, refusal, test_refusal
from app.metering.schemas import UsageEventIn
from app.metering.scripts import (
    GRANTED,
    NEEDS_COUNTER,
    commit_script,
    release_script,
    reserve_script,
    seed_script,
)
from app.metering.settle import commit_again, note_failed_writes
from app.observability import metrics
from app.plans import Plan, PlanLimits, limits_for

logger = logging.getLogger(__name__)

CREDITS_PER_CALL = 1
# More commands for the pipeline of a commit or a release (one round trip for all).
AlsoWrite = Callable[[AsyncPipeline], None]
# Counters stay readable for about three months after their period ends.
COUNTER_RETENTION = timedelta(days=100)
# How long a cluster's commit stays keyed against a second run (see `send_commit`).
RESENT_COMMIT_TTL_S = 60


@dataclass(frozen=True)
class Reservation:
    reservation_id: str
    user_id: str
    period: str
    plan: Plan
    # What admission saw, for the HTTP API's RateLimit and credit headers: credits used
    # before this call, the credit limit in force (None: none), whole tokens left in the
    # key's and the account's rate buckets after this call took its own.
    used: int = 0
    credit_limit: int | None = None
    key_tokens: int = 0
    account_tokens: int = 0
    granted: int = 0  # credits granted this month (the counter already holds them)
    # A test-mode key's call: held on the test counter, committed there only (no usage
    # event, no ledger, no alerts, no billing).
    test: bool = False

    @property
    def counter_keys(self) -> list[str]:
        """The counter and reservation set this reservation holds a credit on."""
        counter = (test_counter_key if self.test else counter_key)(self.user_id, self.period)
        return [counter, counter + ":res"]

    def reading(self, *, charged: int, used: int | None = None) -> MeterReading:
        """The answer's credits (`app.metering.readings`): `used` as the commit counted
        it, else as admission did plus `charged`."""
        counted = used if used is not None else self.used + charged
        return MeterReading(
            charged=charged,
            used=counted,
            plan=self.plan,
            period=self.period,
            granted=self.granted,
            credit_limit=self.credit_limit,
        )


def counter_ttl_s(period: str) -> int:
    """Seconds a counter of `period` is kept: until its end plus the retention."""
    remaining = period_end(period) + COUNTER_RETENTION - utcnow()
    return max(int(remaining.total_seconds()), int(COUNTER_RETENTION.total_seconds()))


async def reserve(
    user_id: str,
    plan: Plan,
    *,
    key_id: str | None = None,
    cost: int = 1,
    credit_cap: int | None = None,
    granted: int = 0,
    now: datetime | None = None,
    test: bool = False,
) -> Reservation:
    """Admit one call and hold its credit, in one Lua call: the key's and the account's
    rate buckets (`cost` tokens), the account's concurrency, then the credit limit
    (free: used + in flight < quota; any plan: < the account's own cap). A refusal
    (RateLimited, QuotaExceeded) holds and charges nothing.

    `test`: a test-mode key's call, admitted on the account's test counter and test
    buckets against `test_key_monthly_calls` only: live usage, the quota and the
    account's cap are neither read nor touched."""
    if test:
        return await _reserve_test(user_id, plan, key_id=key_id, cost=cost, now=now)
    moment = now or utcnow()
    period = period_of(moment)
    limit = credit_limit(plan, credit_cap)
    terms = recent_refusals.Terms(plan, credit_cap, limit, granted, period)
    if key_id is not None:  # refused a moment ago: the same answer, no Redis call
        recent_refusals.check(user_id, key_id, plan, terms=terms)
    limits = limits_for(plan)
    reservation_id = "res_" + secrets.token_hex(10)
    cost = min(cost, limits.burst)  # never more than a full bucket holds
    keys, args = admission_arguments(user_id, period, key_id, reservation_id, limits, limit, cost)
    reply = await run_admission(reserve_script, user_id, period, keys, args)
    status, used, in_flight, wait_ms = (int(value) for value in reply[:4])
    if status != GRANTED:
        error = refusal(
            status,
            plan,
            limits,
            credit_cap,
            used,
            in_flight,
            wait_ms,
            period,
            cost=cost,
            granted=granted,
        )
        if key_id is not None:
            recent_refusals.remember(user_id, key_id, status, wait_ms, cost)
            left_s = (period_end(period) - moment).total_seconds()
            recent_refusals.remember_account(
                user_id, status, error, used=used, limit=limit, terms=terms, period_left_s=left_s
            )
        raise error
    metrics.reservation_opened()
    return Reservation(
        reservation_id=reservation_id,
        user_id=user_id,
        period=period,
        plan=plan,
        used=used,
        credit_limit=limit,
        key_tokens=int(reply[4]),
        account_tokens=int(reply[5]),
        granted=granted,
    )


async def _reserve_test(
    user_id: str, plan: Plan, *, key_id: str | None, cost: int, now: datetime | None
) -> Reservation:
    """`reserve` for a test-mode key: the same script on the test counter and buckets."""
    period = period_of(now or utcnow())
    limits = limits_for(plan)
    limit = get_settings().test_key_monthly_calls
    reservation_id = "res_" + secrets.token_hex(10)
    cost = min(cost, limits.burst)
    keys, args = admission_arguments(user_id, period, key_id, reservation_id, limits, limit, cost)
    counter = test_counter_key(user_id, period)
    keys[:2] = [counter, counter + ":res"]
    keys[3] = test_account_bucket_key(user_id)
    args[4] = 0  # a missing test counter is 0: the ledger never holds test calls
    reply = await reserve_script.run_async(async_redis(), keys, args)
    status, used, in_flight, wait_ms = (int(value) for value in reply[:4])
    if status != GRANTED:
        raise test_refusal(status, plan, limits, limit, used, wait_ms, period, cost=cost)
    return Reservation(
        reservation_id=reservation_id,
        user_id=user_id,
        period=period,
        plan=plan,
        used=used,
        credit_limit=limit,
        key_tokens=int(reply[4]),
        account_tokens=int(reply[5]),
        test=True,
    )


def admission_arguments(
    user_id: str,
    period: str,
    key_id: str | None,
    reservation_id: str,
    limits: PlanLimits,
    limit: int | None,
    amount: int,
) -> tuple[list[str], list[Any]]:
    """KEYS and ARGV of RESERVE and RESERVE_BATCH (`app.metering.scripts`). `amount`: the
    call's cost, or the batch's number of items; `limit`: the credit limit, if any."""
    enforce = 0 if limit is None else 1
    keys = [
        counter_key(user_id, period),
        reservations_key(user_id, period),
        key_bucket_key(user_id, key_id or "-"),
        account_bucket_key(user_id),
    ]
    args = [
        reservation_id,
        get_settings().reservation_ttl_s * 1000,
        limit or 0,
        enforce,
        enforce,  # a credit limit needs the counter (`run_admission`)
        amount,
        limits.rate_per_s,
        limits.burst,
        limits.account_rate_per_s,
        limits.account_burst,
        limits.concurrency,
    ]
    return keys, args


async def run_admission(
    script: LuaScript, user_id: str, period: str, keys: list[str], args: list[Any]
) -> list[Any]:
    """Run a reservation script (`keys[0]` the counter, `args[4]` its "enforce" flag).
    A credit limit needs the counter: a missing one (new period, Redis restarted or
    flushed) is first rebuilt from the ledger, so a flush never grants a fresh quota."""
    reply: list[Any] = await script.run_async(async_redis(), keys, args)
    if reply[0] == NEEDS_COUNTER:
        await seed_counter(user_id, period, keys[0])
        args[4] = 0
        reply = await script.run_async(async_redis(), keys, args)
    return reply


async def seed_counter(user_id: str, period: str, counter: str) -> None:
    """Create a missing counter from the ledger (see `reserve`)."""
    total = await asyncio.to_thread(_ledger_used, user_id, period)
    await seed_script.run_async(async_redis(), [counter], [total, counter_ttl_s(period)])


def _ledger_used(user_id: str, period: str) -> int:
    with new_session() as session:
        return ledger_total(session, user_id, period)


def _note_late_commit(live: int, reservation: Reservation) -> None:
    if not live:
        logger.warning(
            "commit of expired or unknown reservation %s of %s (%s): counted anyway",
            reservation.reservation_id,
            reservation.user_id,
            reservation.period,
        )


async def release(reservation: Reservation, *, also: AlsoWrite | None = None) -> None:
    """The call failed or was abandoned: its credit is returned (costs 0). With Redis
    unreachable the reservation is left to expire after `reservation_ttl_s` (it charges
    nothing), so the call's own error is what the caller sees. `also`: writes of the
    caller's to send in the same round trip (the request log's entry)."""
    keys = reservation.counter_keys
    try:
        if also is None:
            await release_script.run_async(async_redis(), keys, [reservation.reservation_id])
        else:
            async with async_redis().pipeline(transaction=False) as pipe:
                release_script.queue(pipe, keys, [reservation.reservation_id])
                also(pipe)
                await pipe.execute()
    except (redis.RedisError, redis.RedisClusterException) as exc:
        logger.warning("reservation %s left to expire: %s", reservation.reservation_id, exc)
    recent_refusals.slot_freed(reservation.user_id)
    metrics.reservation_closed()


async def send_commit(
    reservation: Reservation,
    *,
    call_id: str,
    key_id: str | None,
    tool: str,
    also: AlsoWrite | None = None,
    retry_key: str | None = None,
) -> Callable[[], Awaitable[int]]:
    """The call succeeded: commit its credit and put its usage event in the outbox, in one
    pipelined round trip; a worker moves the outbox into the ledger (see `outbox`).
    `also`: writes of the caller's for the same round trip (the request log's entry).

    In two halves: this writes the commit to Redis and returns the reader of its reply
    (the account's credits used in the period, this call included), which must be awaited
    once. Once this returns, the commit is on its way: an MCP answer can go out while
    Redis runs it (what a call pays for is written before it is delivered).

    The event carries the reservation's period (a call reserved at 23:59:59.9 on the last
    day is billed to that month). Idempotent by `call_id` in the ledger. The commit also
    decides the month's usage alerts (`app.metering.alerts`).

    `retry_key`: the call's key when the proxy may send it again (`app.metering.retries`):
    an attempt whose request was committed before counts nothing, and every attempt's
    usage event has the same call id, so the ledger keeps one."""
    user_id, period = reservation.user_id, reservation.period
    event = UsageEventIn(
        call_id=call_id if retry_key is None else retries.ledger_call_id(retry_key),
        user_id=user_id,
        key_id=key_id,
        tool=tool,
        credits=CREDITS_PER_CALL,
        period=period,
        created_at=utcnow(),
    )
    async with async_redis().pipeline(transaction=False) as pipe:
        keys = reservation.counter_keys
        # A test call claims no usage alert (a quota of 0: none) and has no usage event.
        warning, quota = (0, 0) if reservation.test else alerts.thresholds(reservation.plan)
        args: list[str | int] = [
            reservation.reservation_id,
            CREDITS_PER_CALL,
            counter_ttl_s(period),
            warning,
            quota,
        ]
        if retry_key is not None:
            keys.append(once_key(user_id, period, retry_key))
            args.append(retries.ONCE_TTL_S)
        elif get_settings().redis_cluster:
            # redis-py's cluster pipeline sends again what a node's error left unanswered
            # (after a failover): keyed by the reservation, a second run counts nothing.
            keys.append(once_key(user_id, period, reservation.reservation_id))
            args.append(RESENT_COMMIT_TTL_S)
        # EVAL, not EVALSHA: a NOSCRIPT inside a pipeline cannot fall back.
        pipe.eval(commit_script.source, len(keys), *keys, *args)
        if not reservation.test:
            pipe.rpush(outbox_key(outbox_bucket(user_id)), outbox.encode(event))
        if also is not None:
            also(pipe)
        read_replies = await send_now(pipe)
    recent_refusals.slot_freed(user_id)
    if not reservation.test:
        outbox.trigger.poke(outbox_bucket(user_id))  # the event is on its way there

    async def committed() -> int:
        replies = await read_replies()
        if isinstance(replies[0], Exception):
            replies[0] = await commit_again(keys, args, replies[0])
        # What rode along (the usage event, the request log, the result's DEL) may sit on
        # other nodes of a cluster: its failure must not fail a call already charged.
        if not reservation.test and isinstance(replies[1], Exception):
            await outbox.push_again(outbox_bucket(user_id), [outbox.encode(event)], replies[1])
        note_failed_writes(replies[1 if reservation.test else 2 :], reservation.reservation_id)
        live, used, alert, counted = replies[0]
        if not counted:  # a retried request, already charged by its first attempt
            metrics.reservation_closed()
            logger.info(
                "call %s repeats request %s, committed before: not charged again",
                call_id,
                event.call_id,
            )
            return int(used)
        metrics.reservation_committed(CREDITS_PER_CALL)
        _note_late_commit(live, reservation)
        if alert:  # this call took the account into warning or to its quota (rare)
            alerts.announce(user_id, period, reservation.plan, int(alert))
        return int(used)

    return committed
