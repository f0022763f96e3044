"""Plans: their monthly quotas and their tenant limits (from Settings), and which plan an
account is on now (read-only: billing owns the writes, `app.billing.service`).

In the bottom layer: metering, tool calls, accounts and billing all read them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlmodel import Session

from app.kit.clock import as_utc, utcnow
from app.kit.config import get_settings
from app.models import Subscription


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


# A subscription cancelled at period end stays in force until then.
ENTITLED_STATUSES = frozenset({"active", "past_due"})


def get_subscription(session: Session, user_id: str) -> Subscription | None:
    return session.get(Subscription, user_id)


def ended(subscription: Subscription, now: datetime) -> bool:
    end = subscription.current_period_end
    return end is not None and as_utc(end) <= now


def in_force(subscription: Subscription | None, now: datetime | None = None) -> bool:
    """Entitled now: active or past due, and not past the end of a cancelled period."""
    if subscription is None or subscription.status not in ENTITLED_STATUSES:
        return False
    return not (subscription.cancel_at_period_end and ended(subscription, now or utcnow()))


def has_subscription(session: Session, user_id: str, *, now: datetime | None = None) -> bool:
    return in_force(get_subscription(session, user_id), now)


def plan_of(session: Session, user_id: str, *, now: datetime | None = None) -> Plan:
    subscription = get_subscription(session, user_id)
    if in_force(subscription, now):
        assert subscription is not None
        return Plan(subscription.plan)
    return Plan.FREE
