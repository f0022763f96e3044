"""An account Redis has just refused for concurrency or credits is refused again in this
process without asking Redis (issue 58), only while Redis would say the same: these
tests change Redis behind the process's back, so only a refusal that never asked Redis
still refuses, and then show each way the remembered refusal lifts."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from app.kit.clock import period_end, period_of, utcnow
from app.kit.errors import QuotaExceeded, RateLimited
from app.metering import recent_refusals
from app.metering.keys import reservations_key
from app.metering.service import Reservation, release, reserve
from app.plans import Plan
from app.runtime import reload_settings
from tests.metering.conftest import Accounts

Outcome = Reservation | RateLimited | QuotaExceeded


@pytest.fixture
def limits(redis_accounts: Accounts, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Free: 2 calls at once, a quota of 5, rate limits out of the way."""
    for name, value in {
        "FREE_RATE_PER_S": "1000",
        "FREE_BURST": "1000",
        "FREE_CONCURRENCY": "2",
        "FREE_QUOTA": "5",
    }.items():
        monkeypatch.setenv(f"GEOSVC_{name}", value)
    reload_settings()
    yield
    recent_refusals.forget_all()


async def attempt(user_id: str, plan: Plan = Plan.FREE, **kwargs: object) -> Outcome:
    kwargs.setdefault("key_id", "k1")
    try:
        return await reserve(user_id, plan, **kwargs)  # type: ignore[arg-type]
    except (RateLimited, QuotaExceeded) as exc:
        return exc


def limit_of(outcome: Outcome) -> str:
    assert isinstance(outcome, RateLimited | QuotaExceeded), outcome
    return str(outcome.details.get("limit", "quota"))


class TestConcurrencyRefusals:
    async def test_refused_again_until_its_wait_or_a_slot_freed_here(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        held = [await attempt(user_id, key_id=f"k{n}") for n in range(2)]
        first = await attempt(user_id, key_id="k8")
        assert limit_of(first) == "concurrency"
        refused_at = time.monotonic()
        # Both slots freed behind this process's back (another api process settled them)
        redis_accounts.store.delete(reservations_key(user_id, period))

        again = await attempt(user_id, key_id="k9")  # any key of the account

        assert time.monotonic() - refused_at < 0.5, "too slow to tell"
        assert isinstance(again, RateLimited)
        assert again.to_body() == first.to_body()  # the same envelope and retryAfterSeconds
        assert again is not first
        # Once its announced wait is over, Redis is asked again
        deadline = refused_at + 5
        while isinstance(outcome := await attempt(user_id, key_id="k9"), RateLimited):
            assert time.monotonic() < deadline, "still refused long after its wait"
            await asyncio.sleep(0.02)
        assert time.monotonic() - refused_at >= 0.5 - 0.01
        assert isinstance(outcome, Reservation)
        for reservation in [*held, outcome]:
            assert isinstance(reservation, Reservation)
            await release(reservation)

    async def test_a_call_settled_in_this_process_lifts_it_at_once(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        held = [await attempt(user_id, key_id=f"k{n}") for n in range(2)]
        assert limit_of(await attempt(user_id)) == "concurrency"
        assert isinstance(held[0], Reservation)

        await release(held[0])
        admitted = await attempt(user_id)

        assert isinstance(admitted, Reservation), admitted
        for reservation in (held[1], admitted):
            assert isinstance(reservation, Reservation)
            await release(reservation)


class TestCreditRefusals:
    async def test_refused_again_without_redis_and_never_charged(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        redis_accounts.set_used(user_id, period, 5)
        first = await attempt(user_id)
        assert isinstance(first, QuotaExceeded)
        refused_at = time.monotonic()
        redis_accounts.set_used(user_id, period, 4)  # repaired down behind its back

        again = [await attempt(user_id, key_id=key) for key in ("k1", "k2")]

        assert time.monotonic() - refused_at < recent_refusals.CREDITS_HELD_S, "too slow"
        assert [each.to_body() for each in again] == [first.to_body()] * 2
        assert redis_accounts.used(user_id, period) == 4  # nothing charged
        assert redis_accounts.store.zcard(reservations_key(user_id, period)) == 0
        # within CREDITS_HELD_S Redis is asked again, and says yes now
        deadline = refused_at + recent_refusals.CREDITS_HELD_S + 5
        while isinstance(outcome := await attempt(user_id), QuotaExceeded):
            assert time.monotonic() < deadline, "still refused long after it lifted"
            await asyncio.sleep(0.05)
        assert isinstance(outcome, Reservation)
        await release(outcome)

    @pytest.mark.parametrize(
        "change",
        [
            {"plan": Plan.STANDARD},  # upgraded
            {"granted": 10},  # credits granted
        ],
    )
    async def test_a_change_of_plan_or_grant_lifts_it_at_once(
        self, limits: None, redis_accounts: Accounts, change: dict[str, object]
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        redis_accounts.set_used(user_id, period, 5)
        assert isinstance(await attempt(user_id), QuotaExceeded)
        if "granted" in change:  # a grant raises the counter's room as the grant script does
            redis_accounts.set_used(user_id, period, 5 - 1)

        outcome = await attempt(user_id, **change)

        assert isinstance(outcome, Reservation), outcome
        await release(outcome)

    async def test_a_raised_cap_lifts_a_spend_cap_refusal_at_once(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        redis_accounts.set_used(user_id, period, 3)
        assert limit_of(await attempt(user_id, Plan.STANDARD, credit_cap=3)) == "spend_cap"
        assert limit_of(await attempt(user_id, Plan.STANDARD, credit_cap=3)) == "spend_cap"

        raised = await attempt(user_id, Plan.STANDARD, credit_cap=4)

        assert isinstance(raised, Reservation), raised
        await release(raised)

    async def test_a_new_month_lifts_it_at_once(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        redis_accounts.set_used(user_id, period, 5)
        assert isinstance(await attempt(user_id), QuotaExceeded)
        next_month = period_end(period) + timedelta(seconds=1)
        redis_accounts.set_used(user_id, period_of(next_month), 0)

        outcome = await attempt(user_id, now=next_month)

        assert isinstance(outcome, Reservation), outcome
        assert outcome.period == period_of(next_month)
        await release(outcome)

    async def test_not_remembered_while_calls_in_flight_may_give_credits_back(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        redis_accounts.set_used(user_id, period, 4)
        in_flight = await attempt(user_id)
        assert isinstance(in_flight, Reservation)
        assert isinstance(await attempt(user_id), QuotaExceeded)  # 4 used + 1 in flight

        await release(in_flight)  # failed: its credit comes back

        outcome = await attempt(user_id, key_id="k2")
        assert isinstance(outcome, Reservation), outcome
        await release(outcome)
