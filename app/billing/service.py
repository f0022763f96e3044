"""Subscriptions: which plan an account is on."""

from __future__ import annotations

from sqlmodel import Session

from app.billing.plans import Plan
from app.models import Subscription

# A subscription cancelled at period end stays in force until then.
ENTITLED_STATUSES = frozenset({"active", "past_due"})


def get_subscription(session: Session, user_id: str) -> Subscription | None:
    return session.get(Subscription, user_id)


def has_subscription(session: Session, user_id: str) -> bool:
    subscription = get_subscription(session, user_id)
    return subscription is not None and subscription.status in ENTITLED_STATUSES


def plan_of(session: Session, user_id: str) -> Plan:
    subscription = get_subscription(session, user_id)
    if subscription is not None and subscription.status in ENTITLED_STATUSES:
        return Plan(subscription.plan)
    return Plan.FREE
