"""Batch admission against the real Redis: items admitted in order by rate and credit, one
concurrency slot for the batch, and commits and releases per item."""

from __future__ import annotations

import pytest

from app.kit.clock import period_of, utcnow
from app.kit.errors import QuotaExceeded, RateLimited
from app.metering.batch import commit_batch, release_batch, reserve_batch
from app.metering.keys import reservations_key
from app.metering.service import release, reserve
from app.plans import Plan
from app.runtime import reload_settings
from tests.metering.conftest import Accounts, call_id


@pytest.fixture
def limits(redis_accounts: Accounts, monkeypatch: pytest.MonkeyPatch) -> None:
    """Free: 10 credits, 6 tokens per key (no refill), 2 calls at once; standard: no cap."""
    for name, value in {
        "FREE_QUOTA": "10",
        "FREE_RATE_PER_S": "0.01",
        "FREE_BURST": "6",
        "FREE_CONCURRENCY": "2",
        "STANDARD_RATE_PER_S": "0.01",
        "STANDARD_BURST": "50",
        "ACCOUNT_RATE_MULTIPLIER": "2",
    }.items():
        monkeypatch.setenv(f"GEOSVC_{name}", value)
    reload_settings()
    return


def in_flight(accounts: Accounts, user_id: str) -> int:
    return int(accounts.store.zcard(reservations_key(user_id, period_of(utcnow()))))


class TestReserveBatch:
    async def test_a_batch_past_the_rate_admits_the_burst_and_refuses_the_rest(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()

        batch = await reserve_batch(user_id, Plan.FREE, 9, key_id="k1")

        assert len(batch.admitted) == 6  # the key's burst
        assert isinstance(batch.refused, RateLimited)
        assert batch.refused.details["limit"] == "key_rate"
        assert batch.refused.details["retryAfterSeconds"] > 0
        assert in_flight(redis_accounts, user_id) == 6  # each item holds its own credit
        assert [r.key_tokens for r in batch.admitted] == [0] * 6
        assert len({r.reservation_id for r in batch.admitted}) == 6

    async def test_a_batch_that_crosses_the_cap_gets_what_fits(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        period = period_of(utcnow())
        redis_accounts.set_used(user_id, period, 7)

        batch = await reserve_batch(user_id, Plan.FREE, 5, key_id="k1")

        assert len(batch.admitted) == 3  # 10 - 7
        assert isinstance(batch.refused, QuotaExceeded)
        assert (batch.refused.details["quota"], batch.refused.details["used"]) == (10, 7)
        used = await commit_batch(
            batch.admitted, call_ids=[call_id() for _ in range(3)], key_id="k1", tool="geocode"
        )
        assert used == 10 == redis_accounts.used(user_id, period)
        assert in_flight(redis_accounts, user_id) == 0

    async def test_a_batch_takes_one_concurrency_slot_and_its_items_count_in_flight(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        other = await reserve(user_id, Plan.FREE, key_id="k2")

        batch = await reserve_batch(user_id, Plan.FREE, 4, key_id="k1")

        assert len(batch.admitted) == 4
        assert batch.refused is None
        with pytest.raises(RateLimited) as busy:  # 5 in flight now, over 2
            await reserve(user_id, Plan.FREE, key_id="k2")
        assert busy.value.details["limit"] == "concurrency"
        second = await reserve_batch(user_id, Plan.FREE, 1, key_id="k2")
        assert second.admitted == []
        assert isinstance(second.refused, RateLimited)
        assert second.refused.details["limit"] == "concurrency"

        await release_batch(batch.admitted)
        await release(other)
        assert in_flight(redis_accounts, user_id) == 0
        assert redis_accounts.used(user_id, period_of(utcnow())) == 0  # nothing charged

    async def test_partial_commit_charges_only_the_items_with_data(
        self, limits: None, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        batch = await reserve_batch(user_id, Plan.STANDARD, 40, key_id="k1")
        assert len(batch.admitted) == 40
        assert batch.refused is None

        with_data, without = batch.admitted[::2], batch.admitted[1::2]
        await commit_batch(
            with_data, call_ids=[call_id() for _ in with_data], key_id="k1", tool="geocode"
        )
        await release_batch(without)

        assert redis_accounts.used(user_id, period_of(utcnow())) == 20
        assert in_flight(redis_accounts, user_id) == 0
