"""What a job would cost before it starts (the dashboard's upload preview): its rows, the
credits at most, what they do to the month's credits, and how long the plan's bulk pace
takes over them. Nothing is stored or charged here.

Only a row that returns data is charged, so `credits_at_most` counts the rows that are
valid calls; an invalid row (answered INVALID_ARGUMENT in its place) and a row that finds
nothing are free. Where a limit stands (the free plan's quota, the account's own cap)
the rows past it are answered QUOTA_EXCEEDED, free: `rows_refused`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from app.jobs.pace import rows_per_s
from app.jobs.service import checked_rows, jobs_working
from app.kit.config import get_settings
from app.metering.readings import calls_used, state_limit, usage_state
from app.metering.refusals import credit_limit
from app.metering.usage import credit_cap_of, usage_for
from app.plans import plan_of

# Invalid rows shown by number in the preview; the rest are counted.
SHOWN_INVALID_ROWS = 5


@dataclass(frozen=True)
class InvalidRow:
    row: int  # 0-based, as the results number them
    message: str


@dataclass(frozen=True)
class JobEstimate:
    tool: str
    rows_total: int
    rows_valid: int
    invalid: list[InvalidRow]  # the first SHOWN_INVALID_ROWS
    rows_invalid: int
    credits_at_most: int  # rows that may be charged (valid, and within the limit)
    rows_refused: int  # valid rows past the free quota or the account's cap
    plan: str
    used_now: int
    used_after_at_most: int
    quota: int
    limit: int | None  # the credits the account may not pass (None: no limit)
    state_now: str  # ok, warning, over
    state_after: str
    rows_per_s: float
    seconds_at_most: float
    jobs_working: int
    jobs_per_account: int


def estimate_job(session: Session, user_id: str, tool: str, items: Sequence[Any]) -> JobEstimate:
    """Raises what `submit_job` raises for the whole job (unknown tool, no rows, too many)."""
    rows = checked_rows(tool, items)
    invalid = [
        InvalidRow(place, row["error"]["message"])
        for place, row in enumerate(rows)
        if "error" in row
    ]
    valid = len(rows) - len(invalid)
    plan = plan_of(session, user_id)
    usage = usage_for(session, user_id)
    limit = credit_limit(plan, credit_cap_of(session, user_id))
    net_used = usage.used - usage.granted  # what the counter holds (grants lower it)
    room = valid if limit is None else max(0, limit - net_used)
    charged = min(valid, room)
    measure = state_limit(usage.quota, limit)
    pace = rows_per_s(plan)
    return JobEstimate(
        tool=tool,
        rows_total=len(rows),
        rows_valid=valid,
        invalid=invalid[:SHOWN_INVALID_ROWS],
        rows_invalid=len(invalid),
        credits_at_most=charged,
        rows_refused=valid - charged,
        plan=plan.value,
        used_now=usage.used,
        used_after_at_most=calls_used(net_used + charged, usage.granted),
        quota=usage.quota,
        limit=limit,
        state_now=usage.state,
        state_after=usage_state(net_used + charged, measure),
        rows_per_s=pace,
        seconds_at_most=math.ceil(valid / pace) if valid else 0,
        jobs_working=jobs_working(session, user_id),
        jobs_per_account=get_settings().jobs_per_account,
    )
