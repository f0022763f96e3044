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

from app.kit.clock import as_utc, period_end, period_start
from app.models import ApiKey, OAuthClient, OAuthGrant, UsageEvent


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
    # "key", or "app": a connected app (OAuth), whose grant id stands where a key id would
    kind: str = "key"


@dataclass(frozen=True)
class Named:
    name: str
    revoked: bool
    kind: str


def principal_names(session: Session, user_id: str, ids: list[str]) -> dict[str, Named]:
    """The name of each key, or of each connected app's client (ids starting `app_`),
    revoked ones included (the usage page, the request log)."""
    named = {
        key.key_id: Named(key.name, key.revoked_at is not None, "key")
        for key in session.exec(
            select(ApiKey).where(col(ApiKey.user_id) == user_id, col(ApiKey.key_id).in_(ids))
        )
    }
    apps = session.exec(
        select(OAuthGrant, OAuthClient.client_name)
        .join(OAuthClient, col(OAuthClient.client_id) == col(OAuthGrant.client_id))
        .where(col(OAuthGrant.user_id) == user_id, col(OAuthGrant.id).in_(ids))
    )
    for grant, client_name in apps:
        named[grant.id] = Named(client_name, grant.revoked_at is not None, "app")
    return named


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
    """Credits per key or connected app in `period` (revoked ones included), largest
    first, with each one's last use in the period."""
    total = func.sum(UsageEvent.credits)
    statement = (
        select(UsageEvent.key_id, total, func.max(UsageEvent.created_at))
        .where(UsageEvent.user_id == user_id, UsageEvent.period == period)
        .group_by(col(UsageEvent.key_id))
        .order_by(total.desc(), col(UsageEvent.key_id))
    )
    rows = list(session.exec(statement))
    names = principal_names(
        session, user_id, [key_id for key_id, _, _ in rows if key_id is not None]
    )
    report = []
    for key_id, credits, last in rows:
        named = names.get(key_id) if key_id is not None else None
        report.append(
            KeyTotal(
                key_id=key_id,
                name=named.name if named else None,
                revoked=named is not None and named.revoked,
                credits=int(credits),
                last_used=as_utc(last) if last is not None else None,
                kind=named.kind if named else "key",
            )
        )
    return report


def last_used_by_key(session: Session, user_id: str) -> dict[str, datetime]:
    """The latest charged call of each of the account's keys and connected apps, over the
    whole ledger (the connected apps page; API keys keep theirs in `last_used_at`)."""
    statement = (
        select(UsageEvent.key_id, func.max(UsageEvent.created_at))
        .where(UsageEvent.user_id == user_id, col(UsageEvent.key_id).is_not(None))
        .group_by(col(UsageEvent.key_id))
    )
    return {key_id: as_utc(last) for key_id, last in session.exec(statement) if key_id}
