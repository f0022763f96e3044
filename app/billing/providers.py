"""Payment providers behind one Protocol.

`local` (the embedded default) takes no money: its checkout is a page served by this
service (`/billing/checkout/{checkoutId}`) whose "Pay" button completes the checkout,
its billing portal is the dashboard's billing page, and every renewal succeeds.

`stripe` (`app.billing.stripe_provider`) is the production path: Checkout Sessions,
Customer Portal sessions, and webhooks (`app.billing.stripe_webhooks`) that move the
subscription; overage is reported as meter events (`app.billing.meter_reports`).
"""

from __future__ import annotations

from typing import Protocol

from sqlmodel import Session

from app.billing.checkout import Checkout
from app.kit.config import get_settings
from app.kit.errors import PaymentProviderUnavailable
from app.kit.ids import random_lower_alnum
from app.models import Subscription


class PaymentProvider(Protocol):
    name: str
    # False when the provider renews by itself and reports back (webhooks): period ends
    # are then not renewed here.
    renews_locally: bool

    def create_checkout(self, session: Session, user_id: str) -> Checkout:
        """Open a checkout for the standard plan (may flush rows)."""
        ...

    def portal_url(self, session: Session, user_id: str) -> str:
        """Where the user manages billing (payment method, invoices)."""
        ...

    def cancel_at_period_end(self, subscription: Subscription) -> None:
        """Tell the provider to stop renewing after the current period."""
        ...

    def renew(self, subscription: Subscription) -> bool:
        """Charge the next period; False when the payment failed."""
        ...

    def resume(self, subscription: Subscription) -> None:
        """Tell the provider to renew again (undo `cancel_at_period_end`)."""
        ...

    def expire_checkout(self, subscription: Subscription) -> None:
        """Close the pending checkout so it can no longer be paid; Conflict when the
        provider says it was paid meanwhile."""
        ...

    def cancel_now(self, subscription: Subscription) -> None:
        """End the subscription at once (the account is being deleted); what it owes so
        far is invoiced now. A pending checkout is closed so it can no longer be paid."""
        ...


class LocalProvider:
    name = "local"
    renews_locally = True

    def create_checkout(self, session: Session, user_id: str) -> Checkout:
        checkout_id = "chk_" + random_lower_alnum(24)
        return Checkout(checkout_id, f"{_base_url()}/billing/checkout/{checkout_id}", None)

    def portal_url(self, session: Session, user_id: str) -> str:
        return f"{_base_url()}/dashboard/billing"

    def cancel_at_period_end(self, subscription: Subscription) -> None:
        return None  # nothing to tell: renewals happen here

    def renew(self, subscription: Subscription) -> bool:
        return True  # the local provider never declines

    def resume(self, subscription: Subscription) -> None:
        return None  # nothing to tell: renewals happen here

    def expire_checkout(self, subscription: Subscription) -> None:
        return None  # its page answers only the account's pending checkout id

    def cancel_now(self, subscription: Subscription) -> None:
        return None  # nothing to tell: its checkout page needs the (deleted) account


def _base_url() -> str:
    return get_settings().base_url.rstrip("/")


def get_provider(name: str | None = None) -> PaymentProvider:
    """The configured provider (or the one a subscription row names)."""
    name = name or get_settings().payment_provider
    if name == "local":
        return LocalProvider()
    if name == "stripe":
        from app.billing.stripe_provider import StripeProvider  # the library loads on use

        return StripeProvider()
    raise PaymentProviderUnavailable(f"Unknown payment provider {name!r}")
