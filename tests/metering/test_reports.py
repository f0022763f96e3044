"""Usage reports from the ledger (the dashboard's usage page), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import text
from sqlmodel import Session

from app.api_keys import service as api_keys
from app.kit.clock import previous_period
from app.metering import reports
from app.metering.ledger import record_events
from app.metering.schemas import UsageEventIn
from tests.metering.conftest import Accounts, call_id

PERIOD = "2026-03"  # 31 days; a fixed month keeps the day arithmetic checkable


def event(user_id: str, at: datetime, *, tool: str = "geocode", key_id: str | None) -> UsageEventIn:
    return UsageEventIn(
        call_id=call_id(),
        user_id=user_id,
        key_id=key_id,
        tool=tool,
        period=f"{at:%Y-%m}",
        created_at=at,
    )


@pytest.fixture
def far_from_utc(session: Session) -> Session:
    """A PostgreSQL session whose time zone is not UTC: days must still be UTC days."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SET TIME ZONE 'America/Los_Angeles'"))
    return session


def test_daily_totals_are_utc_days_of_the_period_with_zeros(
    far_from_utc: Session, accounts: Accounts
) -> None:
    session = far_from_utc
    user_id, other = accounts.create(session), accounts.create(session)
    first_day_end = datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC)
    record_events(
        session,
        [
            event(user_id, first_day_end, key_id=None),
            event(user_id, first_day_end + timedelta(seconds=2), key_id=None),  # 2 March
            event(user_id, datetime(2026, 3, 31, 23, 0, tzinfo=UTC), key_id=None),
            event(user_id, datetime(2026, 2, 28, 23, 0, tzinfo=UTC), key_id=None),  # February
            event(other, first_day_end, key_id=None),
        ],
    )
    session.commit()

    days = reports.daily_totals(session, user_id, PERIOD)

    assert len(days) == 31
    assert days[0] == reports.DayTotal(date(2026, 3, 1), 1)
    assert days[1] == reports.DayTotal(date(2026, 3, 2), 1)
    assert days[30] == reports.DayTotal(date(2026, 3, 31), 1)
    assert sum(day.credits for day in days) == 3
    until = reports.daily_totals(session, user_id, PERIOD, until=datetime(2026, 3, 10, tzinfo=UTC))
    assert [day.day for day in until] == [date(2026, 3, n) for n in range(1, 11)]
    assert reports.daily_totals(session, user_id, previous_period(PERIOD))[-1].credits == 1


def test_breakdowns_by_tool_and_key_with_last_use(session: Session, accounts: Accounts) -> None:
    user_id = accounts.create(session)
    laptop, _ = api_keys.create_key(session, user_id, "laptop")
    server, _ = api_keys.create_key(session, user_id, "server")
    api_keys.revoke_key(session, user_id, server.key_id)
    session.commit()
    start = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
    rows = [event(user_id, start + timedelta(minutes=n), key_id=laptop.key_id) for n in range(3)]
    rows += [
        event(user_id, start + timedelta(days=1), tool="static_map", key_id=server.key_id),
        event(user_id, start + timedelta(days=2), tool="static_map", key_id=server.key_id),
        event(user_id, start + timedelta(days=3), tool="static_map", key_id=server.key_id),
        event(user_id, start + timedelta(days=4), tool="search_nearby", key_id=server.key_id),
        event(user_id, datetime(2026, 4, 2, tzinfo=UTC), key_id=laptop.key_id),  # April
    ]
    record_events(session, rows)
    session.commit()

    assert reports.totals_by_tool(session, user_id, PERIOD) == [
        reports.ToolTotal("geocode", 3),
        reports.ToolTotal("static_map", 3),
        reports.ToolTotal("search_nearby", 1),
    ]
    by_key = reports.totals_by_key(session, user_id, PERIOD)
    assert by_key == [
        reports.KeyTotal(server.key_id, "server", True, 4, start + timedelta(days=4)),
        reports.KeyTotal(laptop.key_id, "laptop", False, 3, start + timedelta(minutes=2)),
    ]
    assert reports.totals_by_key(session, accounts.create(session), PERIOD) == []
