"""The billing side of deleting an account: its subscription ends now, not at the end of
the period, at the payment provider first (Stripe: cancelled, owed usage invoiced now),
then on our row (canceled, plan free). A provider that cannot be reached refuses the
whole deletion (PAYMENT_PROVIDER_UNAVAILABLE): better no deletion than a subscription
still billing an account that no longer exists."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session

from app.billing.providers import get_provider
from app.models import Subscription
from app.plans import Plan, get_subscription

ENDING_STATUSES = frozenset({"incomplete", "active", "past_due"})


def end_subscription_now(session: Session, user_id: str, now: datetime) -> Subscription | None:
    """Cancel at once whatever is pending or in force (the caller holds the account
    lock). Flushes only."""
    subscription = get_subscription(session, user_id)
    if subscription is None or subscription.status not in ENDING_STATUSES:
        return subscription
    get_provider(subscription.provider).cancel_now(subscription)
    subscription.status = "canceled"
    subscription.plan = Plan.FREE.value
    subscription.cancel_at_period_end = False
    subscription.checkout_id = None
    subscription.checkout_url = None
    subscription.checkout_expires_at = None
    if subscription.current_period_end is not None:
        subscription.current_period_end = now
    subscription.updated_at = now
    session.add(subscription)
    session.flush()
    return subscription
