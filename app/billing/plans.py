"""Plans: their monthly quotas and their tenant limits (from Settings)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from app.config import get_settings


class Plan(StrEnum):
    FREE = "free"
    STANDARD = "standard"


def quota_for(plan: Plan) -> int:
    settings = get_settings()
    return settings.standard_quota if plan is Plan.STANDARD else settings.free_quota


@dataclass(frozen=True)
class PlanLimits:
    """How fast and how much at once a plan's accounts may call (see Settings)."""

    rate_per_s: float  # per API key; the account's bucket is `account_rate_multiplier` times
    burst: int
    account_rate_per_s: float
    account_burst: int
    concurrency: int  # calls in flight per account


def limits_for(plan: Plan) -> PlanLimits:
    settings = get_settings()
    if plan is Plan.STANDARD:
        rate, burst = settings.standard_rate_per_s, settings.standard_burst
        concurrency = settings.standard_concurrency
    else:
        rate, burst = settings.free_rate_per_s, settings.free_burst
        concurrency = settings.free_concurrency
    factor = settings.account_rate_multiplier
    return PlanLimits(
        rate_per_s=rate,
        burst=burst,
        account_rate_per_s=rate * factor,
        account_burst=int(burst * factor),
        concurrency=concurrency,
    )
