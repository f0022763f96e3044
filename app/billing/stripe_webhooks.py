"""Stripe webhooks: verify, deduplicate, then apply the subscription as Stripe has it now.

- The `Stripe-Signature` header is checked on the raw body with the library
  (`WebhookSignature.verify_header`, tolerance 300 s); a bad or stale one is a 400 and
  changes nothing.
- Events are applied at most once: their ids go into `stripe_webhook_events` in the
  same transaction as the change they caused.
- Events carry a snapshot from when they happened, and Stripe delivers them in any order
  and sometimes twice. So an event only says *which* subscription to look at: it is
  re-read from Stripe (GET /v1/subscriptions/:id) and that current state is applied. An
  old event applied late therefore writes the newest state, never an older one.
- Subscription status -> ours: trialing/active -> active (plan standard); past_due ->
  past_due, which keeps standard during Stripe's payment retries; unpaid, paused,
  canceled, incomplete_expired -> canceled (plan free); incomplete -> incomplete.
- News of another, older subscription of the same account never replaces a newer one
  (e.g. a late `deleted` of last year's subscription after a new checkout).
- `checkout.session.expired` clears the stored checkout URL of the account whose pending
  checkout it was (reads answer from the row, so this is how they learn of it; the
  expiry stored at creation covers a lost event).
- Types it does not handle are answered 2xx and not recorded.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import stripe
from sqlmodel import Session, select

from app.account_lock import lock_account
from app.billing import invoices
from app.billing.stripe_provider import StripeProvider
from app.kit.clock import utcnow
from app.kit.config import get_settings
from app.kit.errors import AppError, PaymentProviderUnavailable
from app.models import StripeCustomer, StripeWebhookEvent, Subscription
from app.plans import Plan

logger = logging.getLogger(__name__)

SIGNATURE_TOLERANCE_S = 300
MAX_WEBHOOK_BYTES = 512 * 1024  # Stripe's own limit on an event's payload size

HANDLED_TYPES = frozenset(
    {
        "checkout.session.completed",
        "checkout.session.expired",
        "customer.subscription.created",
        "customer.subscription.updated",
        "customer.subscription.deleted",
        "invoice.payment_failed",
    }
)

_STATUSES = {
    "trialing": "active",
    "active": "active",
    "past_due": "past_due",
    "incomplete": "incomplete",
    "unpaid": "canceled",
    "paused": "canceled",
    "canceled": "canceled",
    "incomplete_expired": "canceled",
}
_ENTITLED = frozenset({"active", "past_due"})


class InvalidSignature(AppError):
    code = "INVALID_SIGNATURE"
    status = 400
    default_message = "Stripe-Signature is missing, wrong or too old"


class PayloadTooLarge(AppError):
    code = "PAYLOAD_TOO_LARGE"
    status = 413
    default_message = f"Webhook bodies are limited to {MAX_WEBHOOK_BYTES} bytes"


def verified_event(payload: bytes, signature: str | None) -> dict[str, Any]:
    """The event of a correctly signed body, else InvalidSignature."""
    secret = get_settings().stripe_webhook_secret
    if secret is None:
        raise PaymentProviderUnavailable("GEOSVC_STRIPE_WEBHOOK_SECRET is not set")
    try:
        stripe.WebhookSignature.verify_header(
            payload, signature, secret.get_secret_value(), tolerance=SIGNATURE_TOLERANCE_S
        )
        event = json.loads(payload)
    except (stripe.SignatureVerificationError, ValueError) as exc:
        raise InvalidSignature() from exc
    if not isinstance(event, dict) or not isinstance(event.get("id"), str):
        raise InvalidSignature("The signed body is not a Stripe event")
    return event


def handle_event(session: Session, event: dict[str, Any]) -> str:
    """Apply one verified event; returns what happened (`applied`, `duplicate`,
    `ignored`). Flushes only; the caller commits (a concurrent duplicate then fails the
    commit on the event id, and is a duplicate too)."""
    event_type = str(event.get("type", ""))
    if event_type not in HANDLED_TYPES:
        return "ignored"
    event_id = str(event["id"])
    if session.get(StripeWebhookEvent, event_id) is not None:
        return "duplicate"
    obj = event.get("data", {}).get("object", {})
    if event_type == "checkout.session.expired":
        _forget_checkout(session, str(obj.get("id", "")))
    subscription_id = _subscription_id(event_type, obj)
    if subscription_id is not None:
        current = StripeProvider().retrieve_subscription(subscription_id)
        apply_subscription(session, current)
    session.add(StripeWebhookEvent(event_id=event_id[:255], type=event_type[:100]))
    session.flush()
    return "applied"


def _forget_checkout(session: Session, checkout_id: str) -> None:
    found = session.exec(
        select(Subscription).where(Subscription.checkout_id == checkout_id)
    ).first()
    if found is None:
        return
    lock_account(session, found.user_id)
    row = session.get(Subscription, found.user_id, populate_existing=True)  # as locked
    if row is None or row.checkout_id != checkout_id or row.status != "incomplete":
        return
    row.checkout_url = None
    row.updated_at = utcnow()
    session.add(row)
    session.flush()


def _subscription_id(event_type: str, obj: dict[str, Any]) -> str | None:
    if event_type == "checkout.session.expired":
        return None  # no subscription came of it
    if event_type == "checkout.session.completed":
        found = obj.get("subscription") if obj.get("mode") == "subscription" else None
    elif event_type == "invoice.payment_failed":
        # API 2025-03-31 moved it under parent.subscription_details; older ones have it here
        details = (obj.get("parent") or {}).get("subscription_details") or {}
        found = details.get("subscription") or obj.get("subscription")
    else:
        found = obj.get("id")
    if isinstance(found, dict):  # expanded
        found = found.get("id")
    return found if isinstance(found, str) and found else None


def _user_of(session: Session, stripe_subscription: dict[str, Any]) -> str | None:
    customer = stripe_subscription.get("customer")
    if isinstance(customer, dict):
        customer = customer.get("id")
    row = session.exec(select(StripeCustomer).where(StripeCustomer.customer_id == customer)).first()
    return row.user_id if row is not None else None


def _period(stripe_subscription: dict[str, Any]) -> tuple[datetime | None, datetime | None]:
    # Since API 2025-03-31 periods are per item; older versions have them on the top.
    items = (stripe_subscription.get("items") or {}).get("data") or [{}]
    start = items[0].get("current_period_start") or stripe_subscription.get("current_period_start")
    end = items[0].get("current_period_end") or stripe_subscription.get("current_period_end")

    def moment(value: Any) -> datetime | None:
        return datetime.fromtimestamp(int(value), UTC) if value else None

    return moment(start), moment(end)


def apply_subscription(session: Session, stripe_subscription: dict[str, Any]) -> bool:
    """Make the account's row say what Stripe's subscription says; False when it is not
    ours or is older news than the row. Flushes only."""
    user_id = _user_of(session, stripe_subscription)
    if user_id is None:
        logger.warning("Stripe subscription of an unknown customer; ignored")
        return False
    lock_account(session, user_id)
    row = session.get(Subscription, user_id) or Subscription(user_id=user_id)
    status = _STATUSES.get(str(stripe_subscription.get("status")), "canceled")
    subscription_id = str(stripe_subscription["id"])
    if row.provider_ref not in (None, subscription_id) and status not in _ENTITLED:
        return False  # an older subscription ending: the row follows a newer one
    row.provider = "stripe"
    row.provider_ref = subscription_id
    row.status = status
    row.plan = (Plan.STANDARD if status in _ENTITLED else Plan.FREE).value
    row.current_period_start, row.current_period_end = _period(stripe_subscription)
    row.cancel_at_period_end = bool(stripe_subscription.get("cancel_at_period_end"))
    row.updated_at = utcnow()
    session.add(row)
    session.flush()
    invoices.forget(user_id)  # a payment or a new period: its invoice is new
    return True
