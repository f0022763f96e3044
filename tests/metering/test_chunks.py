"""A bulk job's chunk charged in one Lua call, once (`app.metering.chunks`): against
Redis, with the counter set as the ledger would have it."""

from __future__ import annotations

import json

import pytest

from app.kit.clock import period_of, utcnow
from app.metering.chunks import charge_chunk
from app.metering.keys import outbox_bucket, outbox_key
from app.plans import Plan
from app.runtime import reload_settings
from tests.metering.conftest import Accounts


@pytest.fixture
def free_quota_10(redis_accounts: Accounts, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEOSVC_FREE_QUOTA", "10")
    reload_settings()


def charge(user_id: str, chunk: int, rows: list[int], plan: Plan = Plan.FREE) -> tuple[int, bool]:
    charged = charge_chunk(
        user_id=user_id,
        key_id="k1",
        plan=plan,
        credit_cap=None,
        job_id="job_test",
        chunk=chunk,
        tool="geocode",
        data_rows=rows,
    )
    return charged.charged, charged.repeated


def outbox_call_ids(accounts: Accounts, user_id: str) -> list[str]:
    waiting = accounts.store.lrange(outbox_key(outbox_bucket(user_id)), 0, -1)
    events = [json.loads(raw) for raw in waiting]
    return [event["call_id"] for event in events if event["user_id"] == user_id]


class TestChargeChunk:
    def test_a_chunk_run_twice_is_counted_once(
        self, free_quota_10: None, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        period = period_of(utcnow())
        redis_accounts.set_used(user_id, period, 0)

        assert charge(user_id, 0, [0, 2, 3]) == (3, False)
        assert charge(user_id, 0, [0, 2, 3]) == (3, True)  # a worker killed, run again

        assert redis_accounts.used(user_id, period) == 3
        # each run puts its events in the outbox; the ledger keeps one per call id
        assert sorted(set(outbox_call_ids(redis_accounts, user_id))) == [
            "job_test-0",
            "job_test-2",
            "job_test-3",
        ]

    def test_the_free_cap_charges_what_fits_and_remembers_it(
        self, free_quota_10: None, redis_accounts: Accounts
    ) -> None:
        user_id = redis_accounts.new_id()
        period = period_of(utcnow())
        redis_accounts.set_used(user_id, period, 8)

        assert charge(user_id, 4, [20, 21, 22, 23]) == (2, False)
        assert charge(user_id, 5, [25]) == (0, False)
        assert charge(user_id, 4, [20, 21, 22, 23]) == (2, True)

        assert redis_accounts.used(user_id, period) == 10
        assert sorted(set(outbox_call_ids(redis_accounts, user_id))) == [
            "job_test-20",
            "job_test-21",
        ]

    def test_standard_without_a_cap_charges_every_row(self, redis_accounts: Accounts) -> None:
        user_id = redis_accounts.new_id()
        period = period_of(utcnow())

        assert charge(user_id, 0, list(range(500)), Plan.STANDARD) == (500, False)
        assert redis_accounts.used(user_id, period) == 500
