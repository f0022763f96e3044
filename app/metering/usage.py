"""The month's usage as the control plane shows it (GET /usage, the dashboard, `geosvc admin`):
credits used and granted, the state, the plan's limits, the test keys' counter, and the
account's own monthly cap. Read from the Redis counter, the ledger when Redis cannot say."""

from __future__ import annotations

import logging
from datetime import datetime

import redis
from sqlmodel import Session

from app.kit.clock import period_of, utcnow
from app.kit.config import get_settings
from app.kit.errors import NotFound
from app.kit.redis_client import sync_redis
from app.metering.keys import counter_key, test_counter_key
from app.metering.ledger import granted_in_period, ledger_total
from app.metering.readings import calls_used, state_limit, usage_state
from app.metering.refusals import credit_limit
from app.metering.schemas import TestUsage, UsageLimits, UsageResponse
from app.models import User
from app.plans import Plan, limits_for, plan_of, quota_for

logger = logging.getLogger(__name__)


def used_in_period(session: Session, user_id: str, period: str) -> int:
    """The Redis counter; the ledger when Redis has no counter (cold, flushed, unreachable)."""
    try:
        raw = sync_redis().hget(counter_key(user_id, period), "used")
    except redis.RedisError:
        logger.warning("Redis unreachable; usage of %s read from the ledger", user_id)
        raw = None
    if raw is None:
        return ledger_total(session, user_id, period)
    return int(str(raw))


def test_usage(user_id: str, period: str) -> TestUsage:
    """The month's calls of the account's test-mode keys (0 when Redis cannot say: test
    calls are never in the ledger)."""
    try:
        raw = sync_redis().hget(test_counter_key(user_id, period), "used")
    except redis.RedisError:
        raw = None
    used = int(str(raw)) if raw is not None else 0
    limit = get_settings().test_key_monthly_calls
    return TestUsage(period=period, used=used, limit=limit, remaining=max(0, limit - used))


def usage_limits(plan: Plan) -> UsageLimits:
    limits = limits_for(plan)
    return UsageLimits(
        ratePerSecond=limits.rate_per_s,
        burst=limits.burst,
        accountRatePerSecond=limits.account_rate_per_s,
        accountBurst=limits.account_burst,
        concurrency=limits.concurrency,
        heavyMapPixels=get_settings().heavy_map_pixels,
    )


def usage_for(session: Session, user_id: str, *, now: datetime | None = None) -> UsageResponse:
    """The month's credits: calls' credits (`used`) and grants apart, since the counter
    holds their difference (`app.metering.readings`)."""
    plan = plan_of(session, user_id)
    quota = quota_for(plan)
    period = period_of(now or utcnow())
    net_used = used_in_period(session, user_id, period)
    granted = granted_in_period(session, user_id, period)
    cap = credit_cap_of(session, user_id)
    limit = credit_limit(plan, cap)
    used = calls_used(net_used, granted)
    return UsageResponse(
        period=period,
        used=used,
        granted=granted,
        quota=quota,
        remaining=max(0, (limit if limit is not None else quota) - net_used),
        percent=round(used * 100 / (quota + granted), 2),
        state=usage_state(net_used, state_limit(quota, limit)),
        mode=plan.value,
        limits=usage_limits(plan),
        creditCap=cap,
        test=test_usage(user_id, period),
    )


def credit_cap_of(session: Session, user_id: str) -> int | None:
    user = session.get(User, user_id)
    return user.monthly_credit_cap if user is not None else None


def set_credit_cap(session: Session, user_id: str, cap: int | None) -> None:
    """The account's own monthly cap (None removes it); in force on every api process
    within a second (the entitlements cache). Flushed, not committed."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound("No such account")
    user.monthly_credit_cap = cap
    session.add(user)
    session.flush()
