"""The usage ledger in SQL: the truth the Redis counters are reconciled against."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import case, func, or_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session, col, select

from app.kit.clock import as_utc
from app.metering.schemas import UsageEventIn
from app.models import ApiKey, UsageEvent


def record_events(session: Session, events: Iterable[UsageEventIn]) -> int:
    """Insert events, skipping call ids already in the ledger; returns how many were new.

    INSERT ... ON CONFLICT (call_id) DO NOTHING, so a batch delivered twice (late acks,
    a retried task, a replayed message) is stored once. Only flushes. The rows go as
    parameters of one statement compiled once (SQLAlchemy's "insertmanyvalues"
    executemany), not as literal VALUES: compiling a 500-row VALUES clause cost more CPU
    than everything else in a drain (a bulk job drains 100,000 events).
    """
    unique = {event.call_id: event for event in events}
    rows = [
        {**event.model_dump(), "created_at": as_utc(event.created_at)} for event in unique.values()
    ]
    if not rows:
        return 0
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    table = UsageEvent.__table__  # type: ignore[attr-defined]  # SQLModel's table
    statement = (
        insert(table).on_conflict_do_nothing(index_elements=["call_id"]).returning(table.c.call_id)
    )
    inserted = len(session.execute(statement, rows).all())
    session.flush()
    return inserted


def mark_keys_used(session: Session, events: Iterable[UsageEventIn]) -> None:
    """Move each key's `last_used_at` up to its latest event here: one UPDATE per key of
    the batch, so the keys page need not scan the ledger. Never moves it back (a batch
    replayed late changes nothing). Only flushes."""
    latest: dict[str, datetime] = {}
    for event in events:
        if event.key_id is not None:
            moment = as_utc(event.created_at)
            latest[event.key_id] = max(moment, latest.get(event.key_id, moment))
    last_used = col(ApiKey.last_used_at)
    for key_id, moment in latest.items():
        session.execute(
            update(ApiKey)
            .where(col(ApiKey.key_id) == key_id, or_(last_used.is_(None), last_used < moment))
            .values(last_used_at=moment)
        )
    session.flush()


def ledger_total(session: Session, user_id: str, period: str) -> int:
    statement = select(func.coalesce(func.sum(UsageEvent.credits), 0)).where(
        UsageEvent.user_id == user_id, UsageEvent.period == period
    )
    return int(session.exec(statement).one())


# The tool of an operator's grant: a ledger row of negative credits (`app.admin.service`).
GRANT_TOOL = "admin_grant"


def granted_in_period(session: Session, user_id: str, period: str) -> int:
    """Credits granted to the account in `period` (a positive number)."""
    statement = select(func.coalesce(func.sum(UsageEvent.credits), 0)).where(
        UsageEvent.user_id == user_id,
        UsageEvent.period == period,
        UsageEvent.tool == GRANT_TOOL,
    )
    return -int(session.exec(statement).one())


def ledger_totals(session: Session, period: str, *, before: datetime) -> dict[str, tuple[int, int]]:
    """Per account with events in `period`: (total, total of events created before `before`)."""
    is_early = col(UsageEvent.created_at) < as_utc(before)
    early = func.sum(case((is_early, UsageEvent.credits), else_=0))
    statement = (
        select(UsageEvent.user_id, func.sum(UsageEvent.credits), early)
        .where(UsageEvent.period == period)
        .group_by(col(UsageEvent.user_id))
    )
    return {user: (int(total), int(early or 0)) for user, total, early in session.exec(statement)}


def totals_by_account(session: Session, periods: list[str]) -> list[tuple[str, str, int]]:
    """(user_id, period, credits) for every account with events in the given periods."""
    statement = (
        select(UsageEvent.user_id, UsageEvent.period, func.sum(UsageEvent.credits))
        .where(col(UsageEvent.period).in_(periods))
        .group_by(col(UsageEvent.user_id), col(UsageEvent.period))
    )
    return [(user, period, int(total)) for user, period, total in session.exec(statement)]


def ledger_total_before(session: Session, user_id: str, period: str, before: datetime) -> int:
    statement = select(func.coalesce(func.sum(UsageEvent.credits), 0)).where(
        UsageEvent.user_id == user_id,
        UsageEvent.period == period,
        col(UsageEvent.created_at) < as_utc(before),
    )
    return int(session.exec(statement).one())
