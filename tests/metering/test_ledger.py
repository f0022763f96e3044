"""The SQL ledger and usage reads, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import Session, func, select

from app.kit.clock import period_of, previous_period, utcnow
from app.metering.ledger import ledger_total, record_events
from app.metering.schemas import UsageEventIn
from app.metering.usage import usage_for
from app.models import UsageEvent
from app.plans import Plan
from tests.metering.conftest import Accounts, call_id


def events_for(
    user_id: str, count: int, *, period: str | None = None, at: datetime | None = None
) -> list[UsageEventIn]:
    moment = at or utcnow()
    return [
        UsageEventIn(
            call_id=call_id(),
            user_id=user_id,
            key_id="k1",
            tool="get_population",
            period=period or period_of(moment),
            created_at=moment,
        )
        for _ in range(count)
    ]


def stored(session: Session, user_id: str) -> int:
    statement = select(func.count()).select_from(UsageEvent).where(UsageEvent.user_id == user_id)
    return int(session.exec(statement).one())


class TestRecordEvents:
    def test_same_batch_twice_is_stored_once(self, session: Session, accounts: Accounts) -> None:
        user_id = accounts.new_id()
        batch = events_for(user_id, 30)

        assert record_events(session, batch) == 30
        session.commit()
        assert record_events(session, batch + batch[:5]) == 0
        session.commit()

        assert stored(session, user_id) == 30
        assert ledger_total(session, user_id, period_of(utcnow())) == 30

    def test_duplicates_inside_one_batch_and_large_batches(
        self, session: Session, accounts: Accounts
    ) -> None:
        user_id = accounts.new_id()
        batch = events_for(user_id, 1200)

        assert record_events(session, batch + batch[100:300]) == 1200
        session.commit()

        assert stored(session, user_id) == 1200

    def test_stores_every_field(self, session: Session, accounts: Accounts) -> None:
        user_id = accounts.new_id()
        (event,) = events_for(user_id, 1)
        record_events(session, [event])
        session.commit()

        row = session.exec(select(UsageEvent).where(UsageEvent.call_id == event.call_id)).one()
        assert (row.user_id, row.key_id, row.tool, row.credits, row.period) == (
            user_id,
            "k1",
            "get_population",
            1,
            event.period,
        )


class TestUsageFor:
    def test_reads_the_redis_counter(self, session: Session, accounts: Accounts) -> None:
        user_id = accounts.create(session)
        period = period_of(utcnow())
        accounts.set_used(user_id, period, 800)

        usage = usage_for(session, user_id)

        assert usage.model_dump(exclude={"limits", "test"}) == {
            "creditCap": None,
            "period": period,
            "used": 800,
            "granted": 0,
            "quota": 1000,
            "remaining": 200,
            "percent": 80.0,
            "state": "warning",
            "mode": "free",
        }

    def test_falls_back_to_the_ledger_without_a_counter(
        self, session: Session, accounts: Accounts
    ) -> None:
        user_id = accounts.create(session, Plan.STANDARD)
        record_events(session, events_for(user_id, 7))
        record_events(session, events_for(user_id, 3, period=previous_period(period_of(utcnow()))))
        session.commit()

        usage = usage_for(session, user_id)

        assert (usage.used, usage.quota, usage.mode, usage.state) == (7, 100_000, "standard", "ok")
        assert usage.percent == 0.01

    def test_frozen_clock_picks_the_period(self, session: Session, accounts: Accounts) -> None:
        user_id = accounts.create(session)
        last_month = utcnow().replace(day=1) - timedelta(days=1)
        record_events(session, events_for(user_id, 2, at=last_month))
        session.commit()

        assert usage_for(session, user_id, now=last_month).used == 2
        assert usage_for(session, user_id).used == 0
