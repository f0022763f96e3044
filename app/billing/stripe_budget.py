"""How many Stripe-calling actions one account may take per window (opening a checkout,
the billing portal, cancel/resume, cancelling a checkout), so that one user clicking in a
loop cannot spend the platform's Stripe rate limit for everyone. Reads need no budget:
they never call Stripe, but for the invoices, cached a minute per account
(`app.billing.invoices`).

A fixed window per account in Redis (`GEOSVC_STRIPE_ACTIONS_PER_ACCOUNT` per
`GEOSVC_STRIPE_ACTIONS_WINDOW_S`); over it: RATE_LIMITED with `retryAfterSeconds`, and
Stripe is not asked. If Redis is down the action goes through (Stripe's own limit and the
breaker still stand), like the breaker itself.
"""

from __future__ import annotations

import logging

import redis

from app.kit.config import get_settings
from app.kit.errors import RateLimited
from app.kit.redis_client import sync_redis

logger = logging.getLogger(__name__)


def budget_key(user_id: str) -> str:
    return f"{get_settings().redis_key_prefix}billing:stripe_actions:{{{user_id}}}"


def spend(user_id: str) -> None:
    """Count one Stripe-calling action of this account; RATE_LIMITED over the budget."""
    settings = get_settings()
    key = budget_key(user_id)
    try:
        pipe = sync_redis().pipeline()
        pipe.incr(key)
        pipe.expire(key, settings.stripe_actions_window_s, nx=True)
        pipe.ttl(key)
        count, _set, ttl = pipe.execute()
    except redis.RedisError as exc:
        logger.warning("Stripe action budget unreadable, letting the action through: %s", exc)
        return
    if int(count) > settings.stripe_actions_per_account:
        wait = max(int(ttl), 1)
        raise RateLimited(
            f"Too many billing actions on this account; retry in {wait} s",
            retryAfterSeconds=wait,
        )
