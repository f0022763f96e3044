"""Payment providers behind one Protocol.

`local` (the embedded default) takes no money: its checkout is a page served by this
service (`/billing/checkout/{checkoutId}`) whose "Pay" button completes the checkout,
its billing portal is the dashboard's billing page, and every renewal succeeds.

`stripe` is the production path and is not implemented in this build: selecting it
(`GEOSVC_PAYMENT_PROVIDER=stripe`) makes every operation that needs the provider answer
503 PAYMENT_PROVIDER_UNAVAILABLE with a message saying so. Implementing it means Stripe
Checkout Sessions for `create_checkout`/`checkout_url`, Customer Portal sessions for
`portal_url`, `cancel_at_period_end` on the Stripe subscription, and a webhook endpoint
that calls `app.billing.service.complete_checkout` / updates the status on renewals.
"""

from __future__ import annotations

from typing import Protocol

from app.config import get_settings
from app.errors import PaymentProviderUnavailable
from app.ids import random_lower_alnum
from app.models import Subscription


class PaymentProvider(Protocol):
    name: str

    def create_checkout(self, user_id: str) -> str:
        """Open a checkout for the standard plan; returns its id."""
        ...

    def checkout_url(self, checkout_id: str) -> str:
        """Where the user pays for a pending checkout."""
        ...

    def portal_url(self, user_id: str) -> str:
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


class LocalProvider:
    name = "local"

    def create_checkout(self, user_id: str) -> str:
        return "chk_" + random_lower_alnum(24)

    def checkout_url(self, checkout_id: str) -> str:
        return f"{_base_url()}/billing/checkout/{checkout_id}"

    def portal_url(self, user_id: str) -> str:
        return f"{_base_url()}/dashboard/billing"

    def cancel_at_period_end(self, subscription: Subscription) -> None:
        return None  # nothing to tell: renewals happen here

    def renew(self, subscription: Subscription) -> bool:
        return True  # the local provider never declines

    def resume(self, subscription: Subscription) -> None:
        return None  # nothing to tell: renewals happen here


class StripeProvider:
    """Placeholder for the production provider (see the module docstring)."""

    name = "stripe"

    def __init__(self) -> None:
        raise PaymentProviderUnavailable(
            "GEOSVC_PAYMENT_PROVIDER=stripe is selected but the Stripe provider is not "
            "implemented in this build; use GEOSVC_PAYMENT_PROVIDER=local"
        )

    def create_checkout(self, user_id: str) -> str:
        raise NotImplementedError

    def checkout_url(self, checkout_id: str) -> str:
        raise NotImplementedError

    def portal_url(self, user_id: str) -> str:
        raise NotImplementedError

    def cancel_at_period_end(self, subscription: Subscription) -> None:
        raise NotImplementedError

    def renew(self, subscription: Subscription) -> bool:
        raise NotImplementedError

    def resume(self, subscription: Subscription) -> None:
        raise NotImplementedError


def _base_url() -> str:
    return get_settings().base_url.rstrip("/")


def get_provider(name: str | None = None) -> PaymentProvider:
    """The configured provider (or the one a subscription row names)."""
    name = name or get_settings().payment_provider
    if name == "local":
        return LocalProvider()
    if name == "stripe":
        return StripeProvider()
    raise PaymentProviderUnavailable(f"Unknown payment provider {name!r}")
