"""UTC time, ISO timestamps and monthly billing periods (`YYYY-MM`, calendar months in UTC)."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything we store is UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def iso_ms(moment: datetime) -> str:
    """ISO 8601 UTC with milliseconds and `Z`, e.g. 2026-11-22T15:31:45.123Z."""
    return as_utc(moment).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def period_of(moment: datetime) -> str:
    return as_utc(moment).strftime("%Y-%m")


def period_start(period: str) -> datetime:
    year, month = (int(part) for part in period.split("-"))
    return datetime(year, month, 1, tzinfo=UTC)


def next_period(period: str) -> str:
    year, month = (int(part) for part in period.split("-"))
    return f"{year + month // 12:04d}-{month % 12 + 1:02d}"


def previous_period(period: str) -> str:
    year, month = (int(part) for part in period.split("-"))
    return f"{year - 1:04d}-12" if month == 1 else f"{year:04d}-{month - 1:02d}"


def period_end(period: str) -> datetime:
    """Exclusive end: the first instant of the next period (what `resetsAt` reports)."""
    return period_start(next_period(period))
