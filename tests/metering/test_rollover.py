"""The monthly rollover (service level) with a frozen clock."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from sqlmodel import Session, select

from app.kit.clock import iso_ms, next_period, period_end, period_of, utcnow
from app.metering.ledger import record_events
from app.metering.rollover import finalise_periods
from app.models import UsagePeriod
from app.plans import Plan
from tests.metering.conftest import Accounts
from tests.metering.test_ledger import events_for


def rows_of(session: Session, user_id: str) -> list[UsagePeriod]:
    statement = select(UsagePeriod).where(UsagePeriod.user_id == user_id)
    return list(session.exec(statement))


class TestFinalisePeriods:
    def test_previous_period_is_finalised_once(self, session: Session, accounts: Accounts) -> None:
        period = period_of(utcnow())
        last_moment = period_end(period) - timedelta(milliseconds=100)  # 23:59:59.9
        midnight = period_end(period)
        user_id = accounts.create(session)
        record_events(session, events_for(user_id, 5, at=last_moment))
        record_events(session, events_for(user_id, 2, at=midnight))  # the new period
        session.commit()

        first = finalise_periods(session, now=midnight, settle_s=0)
        session.commit()
        second = finalise_periods(session, now=midnight, settle_s=0)
        session.commit()

        assert (user_id, period) in first.finalised
        assert all(user != user_id for user, _ in second.finalised)
        (row,) = rows_of(session, user_id)
        assert (row.period, row.plan, row.quota, row.used, row.overage) == (
            period,
            "free",
            1000,
            5,
            0,
        )

    def test_waits_for_calls_in_flight_at_midnight(
        self, session: Session, accounts: Accounts
    ) -> None:
        period = period_of(utcnow())
        midnight = period_end(period)
        user_id = accounts.create(session)
        record_events(session, events_for(user_id, 1, period=period, at=midnight))
        session.commit()

        early = finalise_periods(session, now=midnight, settle_s=60)
        session.commit()
        assert early.settle_at == midnight + timedelta(seconds=60)
        assert rows_of(session, user_id) == []

        # a call reserved at 23:59:59 commits after midnight; its event is billed to `period`
        record_events(session, events_for(user_id, 1, period=period, at=midnight))
        session.commit()
        settled = finalise_periods(session, now=early.settle_at, settle_s=60)
        session.commit()

        assert settled.settle_at is None
        assert [row.used for row in rows_of(session, user_id)] == [2]

    def test_standard_overage_is_recorded(
        self, small_quotas: tuple[int, int], session: Session, accounts: Accounts
    ) -> None:
        _free, standard = small_quotas
        period = period_of(utcnow())
        over = accounts.create(session, Plan.STANDARD)
        free = accounts.create(session)
        record_events(session, events_for(over, standard + 7))
        record_events(session, events_for(free, 12))  # a free account a little past its cap
        session.commit()

        finalise_periods(session, now=period_end(period), settle_s=0)
        session.commit()

        (row,) = rows_of(session, over)
        assert (row.plan, row.quota, row.used, row.overage) == ("standard", 20, 27, 7)
        (free_row,) = rows_of(session, free)
        assert (free_row.plan, free_row.used, free_row.overage) == ("free", 12, 0)

    def test_a_late_run_catches_up_missed_months(
        self, session: Session, accounts: Accounts
    ) -> None:
        period = period_of(utcnow())
        user_id = accounts.create(session)
        record_events(session, events_for(user_id, 1, at=utcnow()))
        session.commit()
        two_months_later = period_end(next_period(period)) + timedelta(days=3)

        finalise_periods(session, now=two_months_later, settle_s=60)
        session.commit()

        assert [row.period for row in rows_of(session, user_id)] == [period]


class TestRolloverTask:
    """The task body (`workers.maintenance.rollover`), as beat sends it, with `now` frozen."""

    def test_two_runs_at_once_finalise_once_and_one_stands_aside(
        self, session: Session, accounts: Accounts
    ) -> None:
        from workers.maintenance import rollover

        period = period_of(utcnow())
        user_id = accounts.create(session)
        record_events(session, events_for(user_id, 3))
        session.commit()
        now = iso_ms(period_end(period) + timedelta(hours=1))
        barrier = threading.Barrier(2)

        def run(_: int) -> dict[str, Any]:
            barrier.wait(timeout=10)
            return rollover(now=now, settle_s=0)

        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(run, range(2)))

        assert sorted(bool(r.get("skipped")) for r in results) == [False, True]
        assert [r["finalised"] >= 1 for r in results if not r.get("skipped")] == [True]
        assert [(row.period, row.used) for row in rows_of(session, user_id)] == [(period, 3)]

    def test_a_beat_an_hour_late_finalises_the_month_once(
        self, session: Session, accounts: Accounts
    ) -> None:
        from workers.maintenance import rollover

        period = period_of(utcnow())
        user_id = accounts.create(session)
        record_events(session, events_for(user_id, 4))
        session.commit()
        an_hour_late = iso_ms(period_end(period) + timedelta(hours=1))

        first = rollover(now=an_hour_late)  # the default settle window (60 s) is long past
        second = rollover(now=an_hour_late)

        assert first["finalised"] >= 1
        assert first["settleAt"] is None
        assert second == {"finalised": 0, "settleAt": None}
        assert [(row.period, row.used) for row in rows_of(session, user_id)] == [(period, 4)]
