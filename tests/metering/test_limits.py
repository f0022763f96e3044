"""Tenant limits at admission (issue 20), against the real Redis: the key's and the
account's token buckets, per-plan limits, concurrency leases, the account's own credit cap,
and that no refusal holds or charges anything."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from app.kit.clock import period_of, utcnow
from app.kit.errors import QuotaExceeded, RateLimited
from app.metering import recent_refusals
from app.metering.batch import reserve_batch
from app.metering.keys import key_bucket_key, outbox_bucket, outbox_key, reservations_key
from app.metering.service import Reservation, release, reserve
from app.plans import Plan
from app.runtime import reload_settings
from tests.metering.conftest import Accounts, commit

Outcome = Reservation | RateLimited | QuotaExceeded

# Refill so slow (one token in 100 s) that what a test sees is the burst alone.
NO_REFILL = "0.01"


@pytest.fixture
def limits(
    redis_accounts: Accounts, monkeypatch: pytest.MonkeyPatch
) -> Iterator[pytest.MonkeyPatch]:
    """Free: 3 per key, 6 per account, 2 at once; standard: 6 per key, 12 per account,
    4 at once; no refill unless a test sets a rate."""
    for name, value in {
        "FREE_RATE_PER_S": NO_REFILL,
        "FREE_BURST": "3",
        "FREE_CONCURRENCY": "2",
        "STANDARD_RATE_PER_S": NO_REFILL,
        "STANDARD_BURST": "6",
        "STANDARD_CONCURRENCY": "4",
        "ACCOUNT_RATE_MULTIPLIER": "2",
    }.items():
        monkeypatch.setenv(f"GEOSVC_{name}", value)
    reload_settings()
    return monkeypatch


async def attempt(
    user_id: str, plan: Plan = Plan.FREE, *, key_id: str = "k1", **kwargs: int | None
) -> Outcome:
    try:
        return await reserve(user_id, plan, key_id=key_id, **kwargs)  # type: ignore[arg-type]
    except (RateLimited, QuotaExceeded) as exc:
        return exc


async def admitted_then_released(user_id: str, plan: Plan, count: int, key_id: str) -> None:
    """`count` calls admitted one after another (each released: concurrency stays free)."""
    for _ in range(count):
        outcome = await attempt(user_id, plan, key_id=key_id)
        assert isinstance(outcome, Reservation), outcome
        await release(outcome)


def limit_of(outcome: Outcome) -> str:
    assert isinstance(outcome, RateLimited | QuotaExceeded), outcome
    return str(outcome.details.get("limit", "quota"))


class TestRateBuckets:
    @pytest.mark.parametrize(("plan", "burst"), [(Plan.FREE, 3), (Plan.STANDARD, 6)])
    async def test_a_key_gets_its_plans_burst_then_a_retryable_refusal(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts, plan: Plan, burst: int
    ) -> None:
        user_id = redis_accounts.new_id()
        await admitted_then_released(user_id, plan, burst, "k1")

        refused = await attempt(user_id, plan)

        assert isinstance(refused, RateLimited)
        body = refused.to_body()["error"]
        assert body["code"] == "RATE_LIMITED"
        assert body["limit"] == "key_rate"
        assert body["retryable"] is True
        # one token at 0.01/s: 100 s away (less what refilled since the burst began)
        assert 95 <= body["retryAfterSeconds"] <= 100
        assert "API key" in body["message"]
        assert f"bursts of {burst}" in body["message"]

    async def test_the_bucket_refills_at_the_rate(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        # 1/s: a token a second, slow enough that a loaded machine's pauses between these
        # steps (a few hundred ms) do not refill the bucket before the refusals are seen
        limits.setenv("GEOSVC_FREE_RATE_PER_S", "1")
        reload_settings()
        user_id = redis_accounts.new_id()
        await admitted_then_released(user_id, Plan.FREE, 3, "k1")
        first_refusal = await attempt(user_id)
        assert isinstance(first_refusal, RateLimited)
        assert 0 < first_refusal.details["retryAfterSeconds"] <= 1.0  # one token at 1/s

        deadline = time.monotonic() + 10
        while isinstance(outcome := await attempt(user_id), RateLimited):
            assert time.monotonic() < deadline, "no token came back"
            await asyncio.sleep(0.02)
        await release(outcome)
        # one token came back, not the burst: the next call is refused again
        assert isinstance(await attempt(user_id), RateLimited)

    async def test_the_accounts_bucket_bounds_all_its_keys(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        await admitted_then_released(user_id, Plan.FREE, 3, "k1")
        await admitted_then_released(user_id, Plan.FREE, 3, "k2")

        third_key = await attempt(user_id, key_id="k3")  # its own bucket is full

        assert limit_of(third_key) == "account_rate"
        assert "this account" in third_key.message

    async def test_accounts_do_not_share_buckets(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        noisy, quiet = redis_accounts.new_id(), redis_accounts.new_id()
        await admitted_then_released(noisy, Plan.FREE, 3, "k1")
        assert isinstance(await attempt(noisy), RateLimited)

        await admitted_then_released(quiet, Plan.FREE, 3, "k1")  # same key id, other account

    async def test_a_heavy_call_takes_its_weight_in_tokens(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        heavy = await attempt(user_id, Plan.STANDARD, cost=4)
        assert isinstance(heavy, Reservation)
        await release(heavy)

        refused = await attempt(user_id, Plan.STANDARD, cost=4)
        assert limit_of(refused) == "key_rate"
        assert "This call counts as 4 calls" in str(refused)
        light = await attempt(user_id, Plan.STANDARD)  # 2 tokens were left
        assert isinstance(light, Reservation)
        await release(light)

    async def test_a_call_heavier_than_the_burst_still_fits_a_full_bucket(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        outcome = await attempt(redis_accounts.new_id(), cost=50)
        assert isinstance(outcome, Reservation)
        await release(outcome)


class TestConcurrency:
    async def test_one_call_more_than_the_plan_allows_is_refused_at_once(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        held = [await attempt(user_id, key_id=f"k{n}") for n in range(2)]
        assert all(isinstance(r, Reservation) for r in held)

        refused = await attempt(user_id, key_id="k9")

        assert limit_of(refused) == "concurrency"
        assert isinstance(refused, RateLimited)
        assert refused.details["retryable"] is True
        assert refused.details["retryAfterSeconds"] > 0
        assert "at most 2 calls" in refused.message
        assert "2 are in progress" in refused.message
        assert redis_accounts.store.zcard(reservations_key(user_id, period)) == 2

        # released (failed call) and committed (successful call) both free their slot
        assert isinstance(held[0], Reservation)
        assert isinstance(held[1], Reservation)
        await release(held[0])
        await commit(held[1])
        again = [await attempt(user_id, key_id=f"k{n}") for n in range(4, 6)]
        assert all(isinstance(r, Reservation) for r in again)
        await asyncio.gather(*(release(r) for r in again if isinstance(r, Reservation)))

    async def test_the_standard_plan_has_its_own_concurrency(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        outcomes = [await attempt(user_id, Plan.STANDARD, key_id=f"k{n}") for n in range(5)]
        assert [isinstance(o, Reservation) for o in outcomes] == [True] * 4 + [False]
        assert limit_of(outcomes[4]) == "concurrency"
        await asyncio.gather(*(release(r) for r in outcomes if isinstance(r, Reservation)))

    async def test_the_slot_of_a_killed_process_is_a_lease_that_expires(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts, use_redis: dict[str, str]
    ) -> None:
        ttl_s = 5
        limits.setenv("GEOSVC_FREE_RATE_PER_S", "1000")  # this test polls: only slots count
        reload_settings()
        user_id = redis_accounts.new_id()
        script = (
            "import asyncio, sys\n"
            "from app.plans import Plan\n"
            "from app.metering.service import reserve\n"
            "async def main():\n"
            "    for n in range(2):\n"
            "        await reserve(sys.argv[1], Plan.FREE, key_id=f'k{n}')\n"
            "    print('held', flush=True)\n"
            "    await asyncio.sleep(600)\n"
            "asyncio.run(main())\n"
        )
        env = {**use_redis, "GEOSVC_RESERVATION_TTL_S": str(ttl_s), "GEOSVC_FREE_CONCURRENCY": "2"}
        child = subprocess.Popen(
            [sys.executable, "-c", script, user_id], env=env, stdout=subprocess.PIPE
        )
        try:
            assert child.stdout is not None
            assert child.stdout.readline() == b"held\n"  # both slots taken
            held_at = time.monotonic()
            assert limit_of(await attempt(user_id, key_id="k8")) == "concurrency"
        finally:
            child.kill()  # SIGKILL: no release, no cleanup
            child.wait()

        deadline = held_at + ttl_s + 2
        while not isinstance(outcome := await attempt(user_id, key_id="k9"), Reservation):
            assert limit_of(outcome) == "concurrency"
            assert time.monotonic() < deadline, "the dead process's slots never came back"
            await asyncio.sleep(0.1)
        assert time.monotonic() - held_at >= ttl_s - 0.5  # not before the lease ended
        await release(outcome)


class TestCreditCap:
    async def test_a_standard_account_stops_at_its_own_cap(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        limits.setenv("GEOSVC_STANDARD_RATE_PER_S", "1000")
        reload_settings()
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        redis_accounts.set_used(user_id, period, 3)

        granted = await attempt(user_id, Plan.STANDARD, credit_cap=4)
        assert isinstance(granted, Reservation)
        capped = await attempt(user_id, Plan.STANDARD, credit_cap=4)  # 3 used + 1 in flight
        await commit(granted)

        assert isinstance(capped, QuotaExceeded)
        body = capped.to_body()["error"]
        assert body["code"] == "QUOTA_EXCEEDED"
        assert body["limit"] == "spend_cap"
        assert body["cap"] == 4
        assert "Your own monthly credit cap of 4" in body["message"]
        assert body["period"] == period
        assert body["resetsAt"]
        assert limit_of(await attempt(user_id, Plan.STANDARD, credit_cap=4)) == "spend_cap"
        # no cap: the standard plan goes on into overage
        uncapped = await attempt(user_id, Plan.STANDARD, credit_cap=None)
        assert isinstance(uncapped, Reservation)
        await release(uncapped)

    async def test_a_free_account_below_its_quota_uses_the_lower_cap(
        self, limits: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        redis_accounts.set_used(user_id, period, 2)

        assert limit_of(await attempt(user_id, credit_cap=2)) == "spend_cap"
        granted = await attempt(user_id, credit_cap=None)  # the quota still has room
        assert isinstance(granted, Reservation)
        await release(granted)


async def test_no_refusal_holds_or_charges_anything(
    limits: pytest.MonkeyPatch, redis_accounts: Accounts
) -> None:
    user_id, period = redis_accounts.new_id(), period_of(utcnow())
    redis_accounts.set_used(user_id, period, 5)
    outbox = outbox_key(outbox_bucket(user_id))
    outbox_before = redis_accounts.store.llen(outbox)
    held = await attempt(user_id, key_id="a")
    assert isinstance(held, Reservation)

    refusals = [
        await attempt(user_id, key_id="a", credit_cap=6),  # cap: 5 used + 1 in flight
        await attempt(user_id, key_id="b"),  # takes the second slot
    ]
    second = refusals.pop()
    assert isinstance(second, Reservation)
    refusals.append(await attempt(user_id, key_id="c"))
    # Redis is asked again (not this process's memory of the refusal, which takes no token)
    recent_refusals.forget_all()
    refusals.append(await attempt(user_id, key_id="a"))
    await release(second)
    refusals += [await attempt(user_id, key_id="a") for _ in range(3)]  # bucket "a" empty

    assert {limit_of(r) for r in refusals} == {"spend_cap", "concurrency", "key_rate"}
    assert redis_accounts.used(user_id, period) == 5
    assert redis_accounts.store.zcard(reservations_key(user_id, period)) == 1  # `held` only
    assert redis_accounts.store.llen(outbox) == outbox_before
    await release(held)


class TestRecentRefusals:
    """A key Redis has just refused is refused in-process until its retryAfterSeconds,
    without asking Redis (issue 36, item 5): a flood that ignores Retry-After costs no
    Redis round trip per call, and only that key is held back."""

    @pytest.fixture
    def refilling(self, limits: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
        limits.setenv("GEOSVC_FREE_RATE_PER_S", "2")  # one token in 0.5 s
        reload_settings()
        return limits

    async def test_a_refused_key_is_refused_again_without_redis_until_its_wait(
        self, refilling: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        await admitted_then_released(user_id, Plan.FREE, 3, "k1")
        first = await attempt(user_id)
        assert limit_of(first) == "key_rate"
        assert isinstance(first, RateLimited)
        refused_at, wait_s = time.monotonic(), first.details["retryAfterSeconds"]
        # A full bucket in Redis: only a refusal that never asks Redis still refuses.
        redis_accounts.store.delete(key_bucket_key(user_id, "k1"))

        again = await attempt(user_id)

        assert time.monotonic() - refused_at < wait_s, "too slow to tell"
        assert limit_of(again) == "key_rate"
        assert isinstance(again, RateLimited)
        assert 0 < again.details["retryAfterSeconds"] <= wait_s
        assert "No credit was charged" in again.message
        # per key: another key of the same account is admitted at once
        other = await attempt(user_id, key_id="k2")
        assert isinstance(other, Reservation), other
        await release(other)
        # and once the wait is over the key asks Redis again (its bucket is full now)
        deadline = refused_at + wait_s + 5
        while isinstance(outcome := await attempt(user_id), RateLimited):
            assert time.monotonic() < deadline, "still refused long after its wait"
            await asyncio.sleep(0.02)
        assert time.monotonic() - refused_at >= wait_s - 0.01
        assert isinstance(outcome, Reservation)
        await release(outcome)

    async def test_a_refused_batch_admits_nothing_until_the_wait(
        self, refilling: pytest.MonkeyPatch, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        await admitted_then_released(user_id, Plan.FREE, 3, "k1")
        assert limit_of(await attempt(user_id)) == "key_rate"
        redis_accounts.store.delete(key_bucket_key(user_id, "k1"))

        batch = await reserve_batch(user_id, Plan.FREE, 3, key_id="k1")

        assert batch.admitted == []
        assert isinstance(batch.refused, RateLimited)
        assert batch.refused.details["limit"] == "key_rate"
        assert redis_accounts.store.zcard(reservations_key(user_id, period)) == 0
