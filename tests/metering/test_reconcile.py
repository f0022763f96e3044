"""Reconciliation (service level): ledger totals -> Redis counters, both directions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import Session

from app.kit.clock import period_of, utcnow
from app.kit.errors import QuotaExceeded
from app.kit.redis_client import sync_redis
from app.metering.keys import counter_key
from app.metering.ledger import record_events
from app.metering.reconcile import ReconcileResult, reconcile
from app.metering.scripts import reconcile_script
from app.metering.service import reserve
from app.plans import Plan
from tests.metering.conftest import Accounts
from tests.metering.test_ledger import events_for


def repairs_of(result: ReconcileResult, user_id: str) -> list[tuple[int | None, int]]:
    return [(r.before, r.after) for r in result.repairs if r.user_id == user_id]


class TestRepairUp:
    async def test_flushed_counters_come_back_from_the_ledger(
        self, session: Session, accounts: Accounts
    ) -> None:
        period = period_of(utcnow())
        users = {accounts.new_id(): count for count in (3, 40, 1000)}
        for user_id, count in users.items():
            record_events(session, events_for(user_id, count))
            accounts.set_used(user_id, period, count)
        session.commit()
        at_cap = next(user for user, count in users.items() if count == 1000)
        accounts.forget_counters()  # what a flushed Redis looks like

        result = reconcile(session, sync_redis(), now=utcnow())

        for user_id, count in users.items():
            assert accounts.used(user_id, period) == count
            assert repairs_of(result, user_id) == [(None, count)]
        with pytest.raises(QuotaExceeded):
            await reserve(at_cap, Plan.FREE)

    def test_counter_below_the_ledger_is_raised(self, session: Session, accounts: Accounts) -> None:
        user_id, period = accounts.new_id(), period_of(utcnow())
        record_events(session, events_for(user_id, 9))
        session.commit()
        accounts.set_used(user_id, period, 4)
        before = accounts.repairs("up")

        result = reconcile(session, sync_redis(), now=utcnow())

        assert accounts.used(user_id, period) == 9
        assert repairs_of(result, user_id) == [(4, 9)]
        ups = sum(1 for r in result.repairs if r.after > (r.before or 0))
        assert accounts.repairs("up") == before + ups >= before + 1


class TestRepairDown:
    def test_pending_events_are_not_repaired(self, session: Session, accounts: Accounts) -> None:
        user_id, period = accounts.new_id(), period_of(utcnow())
        first_run = utcnow()
        accounts.set_used(user_id, period, 3)  # three commits, events still in the queue

        assert repairs_of(reconcile(session, sync_redis(), now=first_run), user_id) == []
        record_events(session, events_for(user_id, 3, at=first_run - timedelta(seconds=1)))
        session.commit()
        second = reconcile(session, sync_redis(), now=first_run + timedelta(minutes=5))

        assert repairs_of(second, user_id) == []
        assert accounts.used(user_id, period) == 3

    def test_excess_that_persists_is_taken_off_keeping_newer_commits(
        self, session: Session, accounts: Accounts
    ) -> None:
        user_id, period = accounts.new_id(), period_of(utcnow())
        first_run = utcnow()
        accounts.set_used(user_id, period, 5)  # 5 commits, only 2 events ever arrive
        record_events(session, events_for(user_id, 2, at=first_run - timedelta(seconds=30)))
        session.commit()

        assert repairs_of(reconcile(session, sync_redis(), now=first_run), user_id) == []
        # after the snapshot: 4 more commits, whose events arrive normally
        accounts.set_used(user_id, period, 9)
        record_events(session, events_for(user_id, 4, at=first_run + timedelta(seconds=10)))
        session.commit()
        second = reconcile(session, sync_redis(), now=first_run + timedelta(minutes=5))

        assert repairs_of(second, user_id) == [(9, 6)]
        assert accounts.used(user_id, period) == 6
        third = reconcile(session, sync_redis(), now=first_run + timedelta(minutes=10))
        assert repairs_of(third, user_id) == []

    def test_counter_without_any_ledger_events(self, session: Session, accounts: Accounts) -> None:
        user_id, period = accounts.new_id(), period_of(utcnow())
        accounts.set_used(user_id, period, 2)
        first_run = utcnow()

        reconcile(session, sync_redis(), now=first_run)
        result = reconcile(session, sync_redis(), now=first_run + timedelta(minutes=5))

        assert repairs_of(result, user_id) == [(2, 0)]
        assert accounts.used(user_id, period) == 0

    def test_a_flush_between_runs_cancels_the_down_repair(
        self, session: Session, accounts: Accounts
    ) -> None:
        user_id, period = accounts.new_id(), period_of(utcnow())
        accounts.set_used(user_id, period, 2)
        first_run = utcnow()
        reconcile(session, sync_redis(), now=first_run)
        accounts.forget_counters([user_id])
        accounts.set_used(user_id, period, 1)  # one commit after the flush

        result = reconcile(session, sync_redis(), now=first_run + timedelta(minutes=5))

        assert repairs_of(result, user_id) == []
        assert accounts.used(user_id, period) == 1


def test_running_twice_changes_nothing_more(session: Session, accounts: Accounts) -> None:
    user_id, period = accounts.new_id(), period_of(utcnow())
    record_events(session, events_for(user_id, 4))
    session.commit()
    now = utcnow()

    first = reconcile(session, sync_redis(), now=now)
    again = reconcile(session, sync_redis(), now=now)

    assert repairs_of(first, user_id) == [(None, 4)]
    assert repairs_of(again, user_id) == []
    assert accounts.used(user_id, period) == 4


def test_overlapping_runs_take_an_excess_off_once(session: Session, accounts: Accounts) -> None:
    """Two runs that read the same snapshot: the first repair consumes it."""
    user_id, period = accounts.new_id(), period_of(utcnow())
    accounts.set_used(user_id, period, 5)  # 5 commits, never in the ledger
    reconcile(session, sync_redis(), now=utcnow())
    snap_at = sync_redis().hget(counter_key(user_id, period), "snap_at")
    accounts.set_used(user_id, period, 9)  # 4 newer commits, events still pending
    args = [0, 5, snap_at, 3600]  # ledger 0, excess 5 against that snapshot

    first = reconcile_script.run(sync_redis(), [counter_key(user_id, period)], args)
    second = reconcile_script.run(sync_redis(), [counter_key(user_id, period)], args)

    assert (first, second) == ([9, 4], [4, 4])
    assert accounts.used(user_id, period) == 4
