"""Why an admission was refused: the RATE_LIMITED and QUOTA_EXCEEDED errors for what
the reservation script answered (`app.metering.scripts`), each saying which limit, how
to go on and that nothing was charged; and the credit limit a call may not pass."""

from __future__ import annotations

from app.kit.clock import iso_ms, period_end
from app.kit.errors import QuotaExceeded, RateLimited
from app.metering.readings import MeterReading
from app.metering.scripts import ACCOUNT_RATE, CONCURRENCY, KEY_RATE
from app.observability import metrics
from app.plans import Plan, PlanLimits, quota_for


def quota_exceeded(*, quota: int, used: int, in_flight: int, period: str) -> QuotaExceeded:
    resets_at = iso_ms(period_end(period))
    busy = f" ({used} used, {in_flight} held by calls in progress)" if in_flight else ""
    return QuotaExceeded(
        f"The free plan's {quota} monthly credits for {period} are used up{busy}; "
        f"credits reset at {resets_at}. The standard plan has no hard cap.",
        quota=quota,
        used=used,
        period=period,
        resetsAt=resets_at,
    )


def spend_cap_reached(*, cap: int, quota: int, used: int, period: str) -> QuotaExceeded:
    resets_at = iso_ms(period_end(period))
    return QuotaExceeded(
        f"Your own monthly credit cap of {cap} is reached for {period} ({used} used); "
        f"calls resume at {resets_at}, or raise or remove the cap in the dashboard "
        "(PUT /usage/cap). No credit was charged.",
        quota=quota,
        used=used,
        period=period,
        resetsAt=resets_at,
        cap=cap,
        limit="spend_cap",
    )


# A concurrency refusal cannot know when a slot frees; most calls take tens of ms.
CONCURRENCY_RETRY_S = 0.5


def rate_limited(
    status: int, plan: Plan, limits: PlanLimits, wait_ms: int, cost: int = 1, calls: int = 1
) -> RateLimited:
    """`calls` > 1: that many items of a batch were refused; the wait is for all of them
    (the first token's wait, then one token per item at the rate), not for the first."""
    if status == KEY_RATE:
        who, rate, burst = "this API key", limits.rate_per_s, limits.burst
        limit = "key_rate"
    else:
        who, rate, burst = "this account", limits.account_rate_per_s, limits.account_burst
        limit = "account_rate"
    retry_s = round(max(wait_ms, 1) / 1000 + (calls - 1) / rate, 3)
    weight = f" This call counts as {cost} calls (a large map)." if cost > 1 else ""
    if calls > 1:
        weight += (
            f" {calls} items of this batch were past it: resend them then, or send at most "
            f"{burst} items at a time."
        )
    return RateLimited(
        f"Rate limit: {who} may make {rate:g} calls per second (bursts of {burst}) on the "
        f"{plan.value} plan; retry in {retry_s:g} s.{weight} No credit was charged.",
        limit=limit,
        retryable=True,
        retryAfterSeconds=retry_s,
    )


def concurrency_limited(plan: Plan, limits: PlanLimits, in_flight: int) -> RateLimited:
    return RateLimited(
        f"Concurrency limit: the {plan.value} plan runs at most {limits.concurrency} calls "
        f"of an account at once and {in_flight} are in progress; retry when one finishes. "
        "No credit was charged.",
        limit="concurrency",
        retryable=True,
        retryAfterSeconds=CONCURRENCY_RETRY_S,
    )


def credit_limit(plan: Plan, credit_cap: int | None) -> int | None:
    """The credits a call may not take the account past: the free quota, the account's
    own cap (`credit_cap`), whichever is lower; None: no limit (standard, no cap)."""
    limits = [quota_for(plan)] if plan is Plan.FREE else []
    if credit_cap is not None:
        limits.append(credit_cap)
    return min(limits) if limits else None


def refusal(
    status: int,
    plan: Plan,
    limits: PlanLimits,
    credit_cap: int | None,
    used: int,
    in_flight: int,
    wait_ms: int,
    period: str,
    *,
    cost: int,
    calls: int = 1,
    granted: int = 0,
) -> RateLimited | QuotaExceeded:
    """The error of a refused admission (`calls` refused, counted in the metrics), with
    the account's credits as admission read them (`reading`)."""
    error: RateLimited | QuotaExceeded
    quota = quota_for(plan)
    if status in (KEY_RATE, ACCOUNT_RATE):
        metrics.call_refused(plan.value, "rate", calls)
        error = rate_limited(status, plan, limits, wait_ms, cost, calls)
    elif status == CONCURRENCY:
        metrics.call_refused(plan.value, "concurrency", calls)
        error = concurrency_limited(plan, limits, in_flight)
    elif credit_cap is not None and (plan is not Plan.FREE or credit_cap < quota):
        metrics.call_refused(plan.value, "spend_cap", calls)
        error = spend_cap_reached(cap=credit_cap, quota=quota, used=used, period=period)
    else:
        metrics.call_refused(plan.value, "quota", calls)
        error = quota_exceeded(quota=quota, used=used, in_flight=in_flight, period=period)
    error.reading = MeterReading(
        charged=0,
        used=used,
        plan=plan,
        period=period,
        granted=granted,
        credit_limit=credit_limit(plan, credit_cap),
    )
    return error


def test_refusal(
    status: int,
    plan: Plan,
    limits: PlanLimits,
    limit: int,
    used: int,
    wait_ms: int,
    period: str,
    *,
    cost: int,
) -> RateLimited | QuotaExceeded:
    """The error of a refused test-mode call: the rate and concurrency refusals of live
    calls, or the test keys' own monthly limit (never the plan's quota or a cap)."""
    error: RateLimited | QuotaExceeded
    if status in (KEY_RATE, ACCOUNT_RATE):
        error = rate_limited(status, plan, limits, wait_ms, cost)
    elif status == CONCURRENCY:
        error = concurrency_limited(plan, limits, 0)
    else:
        resets_at = iso_ms(period_end(period))
        error = QuotaExceeded(
            f"This account's test keys made their {limit} test calls for {period}; test "
            f"calls resume at {resets_at}. Live keys are not affected. Nothing was charged.",
            quota=limit,
            used=used,
            period=period,
            resetsAt=resets_at,
            limit="test_calls",
        )
    error.reading = MeterReading(
        charged=0, used=used, plan=plan, period=period, granted=0, credit_limit=limit
    )
    return error
