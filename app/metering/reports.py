"""Read-only usage reports from the SQL ledger, for the dashboard's usage page.

The ledger lags the Redis counter by the outbox's batching (about a second), so these
figures can trail the gauge by a few calls; they never count a call the gauge does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Date, cast, func
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session, col, select

from app.clock import as_utc, period_end, period_start
from app.models import ApiKey, UsageEvent


@dataclass(frozen=True)
class DayTotal:
    day: date
    credits: int


@dataclass(frozen=True)
class ToolTotal:
    tool: str
    credits: int


@dataclass(frozen=True)
class KeyTotal:
    key_id: str | None  # None: calls made without a key (none today; kept for old rows)
    name: str | None  # None when the key row is gone
    revoked: bool
    credits: int
    last_used: datetime | None


def _utc_day(session: Session) -> ColumnElement[Any]:
    """The UTC calendar day of `created_at`, in the dialect's terms."""
    created = col(UsageEvent.created_at)
    if session.get_bind().dialect.name == "postgresql":
        return cast(func.timezone("UTC", created), Date)
    return func.date(created)  # SQLite stores the UTC wall time as text


def _as_date(value: date | str) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value)[:10])


def daily_totals(
    session: Session, user_id: str, period: str, *, until: datetime | None = None
) -> list[DayTotal]:
    """Credits per UTC day of `period`, every day from its first up to `until`'s day (or
    the period's last day), zeros included."""
    day = _utc_day(session)
    statement = (
        select(day, func.sum(UsageEvent.credits))
        .where(UsageEvent.user_id == user_id, UsageEvent.period == period)
        .group_by(day)
    )
    by_day = {_as_date(value): int(total) for value, total in session.exec(statement)}
    first = period_start(period).date()
    last = (period_end(period) - timedelta(days=1)).date()
    if until is not None:
        last = max(first, min(last, as_utc(until).date()))
    days = (last - first).days + 1
    return [
        DayTotal(first + timedelta(days=n), by_day.get(first + timedelta(days=n), 0))
        for n in range(days)
    ]


def totals_by_tool(session: Session, user_id: str, period: str) -> list[ToolTotal]:
    """Credits per tool in `period`, largest first."""
    total = func.sum(UsageEvent.credits)
    statement = (
        select(UsageEvent.tool, total)
        .where(UsageEvent.user_id == user_id, UsageEvent.period == period)
        .group_by(col(UsageEvent.tool))
        .order_by(total.desc(), col(UsageEvent.tool))
    )
    return [ToolTotal(tool, int(credits)) for tool, credits in session.exec(statement)]


def totals_by_key(session: Session, user_id: str, period: str) -> list[KeyTotal]:
    """Credits per key in `period` (revoked keys included), largest first, with each
    key's last use in the period."""
    total = func.sum(UsageEvent.credits)
    statement = (
        select(UsageEvent.key_id, total, func.max(UsageEvent.created_at))
        .where(UsageEvent.user_id == user_id, UsageEvent.period == period)
        .group_by(col(UsageEvent.key_id))
        .order_by(total.desc(), col(UsageEvent.key_id))
    )
    rows = list(session.exec(statement))
    key_ids = [key_id for key_id, _, _ in rows if key_id is not None]
    keys = {
        key.key_id: key
        for key in session.exec(
            select(ApiKey).where(col(ApiKey.user_id) == user_id, col(ApiKey.key_id).in_(key_ids))
        )
    }
    report = []
    for key_id, credits, last in rows:
        key = keys.get(key_id) if key_id is not None else None
        report.append(
            KeyTotal(
                key_id=key_id,
                name=key.name if key else None,
                revoked=key is not None and key.revoked_at is not None,
                credits=int(credits),
                last_used=as_utc(last) if last is not None else None,
            )
        )
    return report
