"""The monthly rollover: finalise each account's previous period into `usage_periods` once.

Counters are keyed by period, so the new month starts at 0 by itself; the rollover only
writes the record billing reads: plan, quota, used (from the ledger, the truth) and the
standard plan's overage. A row per (user, period) is unique and inserted with
on-conflict-do-nothing, so running twice, concurrently or late writes it once.

Calls reserved just before midnight are billed to the old period and may commit a few
seconds after it; their ledger events land later still. So the previous period is only
finalised once `settle_s` (the reservation TTL) has passed since midnight; a run inside
that window finalises older periods only and tells the caller when to run again. A run
up to `LOOKBACK_PERIODS` months late still finalises every period it missed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session, col

from app.kit.clock import period_of, period_start, previous_period
from app.metering.ledger import totals_by_account
from app.models import UsagePeriod
from app.plans import Plan, plan_of, quota_for

ROLLOVER_TASK = "metering.rollover"
LOOKBACK_PERIODS = 3


@dataclass
class RolloverResult:
    finalised: list[tuple[str, str]] = field(default_factory=list)  # (user_id, period)
    settle_at: datetime | None = None  # run again then: the previous period is settling


def finalise_periods(session: Session, *, now: datetime, settle_s: float) -> RolloverResult:
    current = period_of(now)
    periods = [previous_period(current)]
    while len(periods) < LOOKBACK_PERIODS:
        periods.append(previous_period(periods[-1]))
    result = RolloverResult()
    settle_at = period_start(current) + timedelta(seconds=settle_s)
    if now < settle_at:
        periods.pop(0)
        result.settle_at = settle_at
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    for user_id, period, used in totals_by_account(session, periods):
        plan = plan_of(session, user_id)
        quota = quota_for(plan)
        overage = max(0, used - quota) if plan is Plan.STANDARD else 0
        row = {
            "user_id": user_id,
            "period": period,
            "plan": plan.value,
            "quota": quota,
            "used": used,
            "overage": overage,
            "finalized_at": now,
        }
        statement = (
            insert(UsagePeriod)
            .values(row)
            .on_conflict_do_nothing(index_elements=["user_id", "period"])
            .returning(col(UsagePeriod.id))
        )
        if session.execute(statement).first() is not None:
            result.finalised.append((user_id, period))
    session.flush()
    return result
