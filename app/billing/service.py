"""Subscriptions: which plan an account is on, checkout, cancellation, period ends.

One `subscriptions` row per account, moved through these states:

    (no row) ── start_checkout ──> incomplete ── complete_checkout ──> active
    canceled ── start_checkout ──> incomplete
    incomplete ── cancel_checkout ──> none (never subscribed) | canceled (subscribed before)
    active ── cancel_subscription ──> active, cancel_at_period_end
    active, cancel_at_period_end ── period end ──> canceled (plan free)
    active ── period end ──> active, next period (provider renews) | past_due (declined)

A period is the calendar month (UTC) in which the checkout completed, then each
following month. Period-end moves are applied lazily whenever a subscription is read
through this module (`settle`); no beat task sweeps them. `plan_of` and `has_subscription`
(`app.plans`) never write: they judge the row as it will be once settled, so a
subscription that ended a second ago is already `free`.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlmodel import Session

from app.account_lock import lock_account
from app.billing.checkout import Checkout
from app.billing.providers import get_provider
from app.billing.schemas import SubscriptionResponse, SubscriptionStatus
from app.kit.clock import as_utc, iso_ms, period_end, period_of, period_start, utcnow
from app.kit.db import new_session
from app.kit.errors import Conflict, NotFound
from app.models import Subscription
from app.plans import ENTITLED_STATUSES, Plan, ended, get_subscription, in_force


def _set_period(subscription: Subscription, now: datetime) -> None:
    period = period_of(now)
    subscription.current_period_start = period_start(period)
    subscription.current_period_end = period_end(period)


def settle(subscription: Subscription, now: datetime) -> bool:
    """Apply a period end that has passed; True when the row changed (not flushed)."""
    if subscription.status not in ENTITLED_STATUSES or not ended(subscription, now):
        return False
    if subscription.cancel_at_period_end:
        subscription.status = "canceled"
        subscription.plan = Plan.FREE.value
    elif subscription.status == "active":
        provider = get_provider(subscription.provider)
        if not provider.renews_locally:
            return False  # the provider renews and reports back (Stripe webhooks)
        if provider.renew(subscription):
            _set_period(subscription, now)
        else:
            subscription.status = "past_due"
    else:
        return False  # past due: the provider's retries decide
    subscription.updated_at = now
    return True


def _settled(session: Session, user_id: str, now: datetime) -> Subscription | None:
    subscription = get_subscription(session, user_id)
    if subscription is not None and settle(subscription, now):
        session.add(subscription)
        session.flush()
    return subscription


def to_response(subscription: Subscription | None, now: datetime) -> SubscriptionResponse:
    if subscription is None:
        return SubscriptionResponse(
            plan="free",
            status="none",
            currentPeriodStart=None,
            currentPeriodEnd=None,
            cancelAtPeriodEnd=False,
            checkoutUrl=None,
        )
    start, end = subscription.current_period_start, subscription.current_period_end
    checkout_url = subscription.checkout_url if checkout_open(subscription, now) else None
    standard = in_force(subscription, now) and subscription.plan == Plan.STANDARD.value
    return SubscriptionResponse(
        plan="standard" if standard else "free",
        status=cast(SubscriptionStatus, subscription.status),  # only known values are stored
        currentPeriodStart=iso_ms(start) if start else None,
        currentPeriodEnd=iso_ms(end) if end else None,
        cancelAtPeriodEnd=subscription.cancel_at_period_end,
        checkoutUrl=checkout_url,
    )


def checkout_open(subscription: Subscription, now: datetime) -> bool:
    """A pending checkout that can still be paid, judged from what we stored (its URL and
    expiry at creation; the `checkout.session.expired` webhook clears the URL), never by
    asking the provider: reads must not spend its rate limit."""
    if subscription.status != "incomplete" or subscription.checkout_id is None:
        return False
    expires = subscription.checkout_expires_at
    return subscription.checkout_url is not None and (expires is None or as_utc(expires) > now)


def _set_checkout(subscription: Subscription, checkout: Checkout | None) -> None:
    subscription.checkout_id = checkout.id if checkout else None
    subscription.checkout_url = checkout.url if checkout else None
    subscription.checkout_expires_at = checkout.expires_at if checkout else None


def subscription_of(
    session: Session, user_id: str, *, now: datetime | None = None
) -> SubscriptionResponse:
    """The account's subscription as the API shows it (settled first; flushes)."""
    now = now or utcnow()
    return to_response(_settled(session, user_id, now), now)


def start_checkout(
    session: Session, user_id: str, *, now: datetime | None = None
) -> tuple[SubscriptionResponse, bool]:
    """Start (or return the pending) checkout of the standard plan.

    Returns the response and whether a new checkout was opened. Conflict when a
    subscription is already in force. Flushes only.
    """
    now = now or utcnow()
    lock_account(session, user_id)  # two clicks open one checkout, not two
    subscription = _settled(session, user_id, now)
    if in_force(subscription, now):
        raise Conflict("A subscription is already active on this account")
    provider = get_provider()
    if (
        subscription is not None
        and subscription.provider == provider.name
        and checkout_open(subscription, now)
    ):
        return to_response(subscription, now), False
    checkout = provider.create_checkout(session, user_id)
    if subscription is None:
        subscription = Subscription(user_id=user_id)
    subscription.status = "incomplete"
    subscription.plan = Plan.FREE.value
    subscription.provider = provider.name
    _set_checkout(subscription, checkout)
    subscription.cancel_at_period_end = False
    subscription.updated_at = now
    session.add(subscription)
    session.flush()
    return to_response(subscription, now), True


def cancel_checkout(
    session: Session,
    user_id: str,
    *,
    checkout_id: str | None = None,
    now: datetime | None = None,
) -> SubscriptionResponse:
    """Close the pending checkout so that it can no longer be paid (at Stripe: the session
    is expired), and go back to the state before it. `checkout_id`, when given, must be
    the pending one (a page left open while another checkout started cancels nothing).

    NotFound when no checkout is pending (a second click finds the first one's work
    done); Conflict when it was paid (the subscription is active: cancel that instead),
    expired, or is not `checkout_id`. Flushes only."""
    now = now or utcnow()
    lock_account(session, user_id)  # a double click closes it once; the second is NotFound
    subscription = _settled(session, user_id, now)
    if subscription is not None and subscription.status in ENTITLED_STATUSES:
        raise Conflict("The checkout was paid: the subscription is active (cancel it instead)")
    if subscription is None or subscription.status != "incomplete" or not subscription.checkout_id:
        raise NotFound("No checkout is pending")
    if checkout_id is not None and subscription.checkout_id != checkout_id:
        raise Conflict("That checkout is no longer the pending one; reload the page")
    if not checkout_open(subscription, now):
        raise Conflict("The checkout has expired already; nothing to cancel")
    get_provider(subscription.provider).expire_checkout(subscription)
    subscription.status = "none" if subscription.current_period_start is None else "canceled"
    _set_checkout(subscription, None)  # its expiry webhook then finds no row: a no-op
    subscription.updated_at = now
    session.add(subscription)
    session.flush()
    return to_response(subscription, now)


def pending_checkout_id(session: Session, user_id: str) -> str | None:
    """The id of the checkout the subscription page shows (its cancel form names it)."""
    subscription = get_subscription(session, user_id)
    return subscription.checkout_id if subscription is not None else None


def pending_checkout(session: Session, user_id: str, checkout_id: str) -> Subscription:
    """The account's open checkout with this id (for the local checkout page)."""
    subscription = get_subscription(session, user_id)
    if (
        subscription is None
        or subscription.checkout_id != checkout_id
        or subscription.status != "incomplete"
        or subscription.provider != "local"
    ):
        raise NotFound("No open checkout with this id")
    return subscription


def complete_checkout(
    session: Session, user_id: str, checkout_id: str, *, now: datetime | None = None
) -> Subscription:
    """The checkout was paid: active on the standard plan for the current calendar month.

    Completing the same checkout twice (a double-submitted form) is a quiet no-op.
    Flushes only.
    """
    now = now or utcnow()
    lock_account(session, user_id)
    subscription = _settled(session, user_id, now)
    if (
        subscription is None
        or subscription.checkout_id != checkout_id
        or subscription.provider != "local"  # others are paid at the provider, not here
    ):
        raise NotFound("No open checkout with this id")
    if subscription.status in ENTITLED_STATUSES:
        return subscription
    if subscription.status != "incomplete":
        raise Conflict("This checkout is closed; start a new one")
    subscription.status = "active"
    subscription.plan = Plan.STANDARD.value
    subscription.provider_ref = checkout_id
    subscription.cancel_at_period_end = False
    _set_period(subscription, now)
    subscription.updated_at = now
    session.add(subscription)
    session.flush()
    return subscription


def set_plan(session: Session, user_id: str, plan: Plan, now: datetime) -> Subscription:
    """An operator's decision (geosvc admin), not a payment: standard is active for the
    current month and renews like a local subscription; free ends the subscription now.
    The caller holds the account lock. Flushes only."""
    subscription = get_subscription(session, user_id) or Subscription(user_id=user_id)
    if plan is Plan.STANDARD:
        subscription.status = "active"
        subscription.provider = "local"
        _set_period(subscription, now)
    else:
        subscription.status = "canceled"
        subscription.current_period_end = now
    subscription.plan = plan.value
    subscription.cancel_at_period_end = False
    _set_checkout(subscription, None)
    subscription.updated_at = now
    session.add(subscription)
    session.flush()
    return subscription


def cancel_subscription(
    session: Session, user_id: str, *, now: datetime | None = None
) -> SubscriptionResponse:
    """Cancel at the end of the current period (it stays active until then); cancelling
    again is a no-op. NotFound when no subscription is in force. Flushes only."""
    return _set_cancel_at_period_end(session, user_id, True, now or utcnow())


def resume_subscription(
    session: Session, user_id: str, *, now: datetime | None = None
) -> SubscriptionResponse:
    """Undo a cancellation at period end while the period lasts (it renews again);
    resuming one that is not cancelled is a no-op. NotFound when no subscription is in
    force (after the period end, subscribe again instead). Flushes only."""
    return _set_cancel_at_period_end(session, user_id, False, now or utcnow())


def _set_cancel_at_period_end(
    session: Session, user_id: str, cancel: bool, now: datetime
) -> SubscriptionResponse:
    lock_account(session, user_id)
    subscription = _settled(session, user_id, now)
    if subscription is None or not in_force(subscription, now):
        raise NotFound(f"No active subscription to {'cancel' if cancel else 'resume'}")
    if subscription.cancel_at_period_end != cancel:
        provider = get_provider(subscription.provider)
        if cancel:
            provider.cancel_at_period_end(subscription)
        else:
            provider.resume(subscription)
        subscription.cancel_at_period_end = cancel
        subscription.updated_at = now
        session.add(subscription)
        session.flush()
    return to_response(subscription, now)


def portal_url(user_id: str) -> str:
    """Where the user manages billing. May create the provider's customer, so it runs in
    its own committed transaction (callers need no session)."""
    with new_session() as session:
        lock_account(session, user_id)
        url = get_provider().portal_url(session, user_id)
        session.commit()
    return url
