"""A bulk job's chunk charged in one Lua call, once (`app.metering.chunks`): against
Redis, with the counter set as the ledger would have it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.kit.clock import period_of, utcnow
from app.metering import chunks
from app.metering.chunks import charge_chunk, forget_markers, marker_key
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


def outbox_events(accounts: Accounts, user_id: str) -> list[dict[str, str]]:
    waiting = accounts.store.lrange(outbox_key(outbox_bucket(user_id)), 0, -1)
    events = [json.loads(raw) for raw in waiting]
    return [event for event in events if event["user_id"] == user_id]


def outbox_call_ids(accounts: Accounts, user_id: str) -> list[str]:
    return [event["call_id"] for event in outbox_events(accounts, user_id)]


def set_clock(monkeypatch: pytest.MonkeyPatch, moment: datetime) -> None:
    """The charge's clock (`app.kit.clock.utcnow`, as chunks.py reads it) at `moment`."""
    monkeypatch.setattr(chunks, "utcnow", lambda: moment)


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

    def test_a_chunk_run_again_in_the_next_month_is_not_charged_again(
        self, free_quota_10: None, redis_accounts: Accounts, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        user_id = redis_accounts.new_id()
        redis_accounts.set_used(user_id, "2026-11", 0)
        redis_accounts.set_used(user_id, "2026-12", 0)
        set_clock(monkeypatch, datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC))
        assert charge(user_id, 0, [0, 2, 3]) == (3, False)

        # its worker killed after the charge; the chunk runs again after midnight UTC
        set_clock(monkeypatch, datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC))
        assert charge(user_id, 0, [0, 2, 3]) == (3, True)

        assert redis_accounts.used(user_id, "2026-11") == 3
        assert redis_accounts.used(user_id, "2026-12") == 0
        # the events sent again keep November: the ledger's one row per call id agrees
        assert {event["period"] for event in outbox_events(redis_accounts, user_id)} == {"2026-11"}

    def test_a_deleted_jobs_markers_are_forgotten(self, redis_accounts: Accounts) -> None:
        user_id = redis_accounts.new_id()
        charge(user_id, 0, [0], Plan.STANDARD)
        charge(user_id, 1, [500], Plan.STANDARD)
        markers = [marker_key(user_id, "job_test", chunk) for chunk in (0, 1)]
        assert redis_accounts.store.exists(*markers) == 2

        forget_markers(user_id, "job_test", 2)

        assert redis_accounts.store.exists(*markers) == 0
