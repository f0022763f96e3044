"""The Stripe payment provider (`GEOSVC_PAYMENT_PROVIDER=stripe`), over the official library.

- One Stripe Customer per account, created on the first checkout (or portal visit) and
  kept in `stripe_customers`; later checkouts reuse it.
- A checkout is a Checkout Session in subscription mode for `GEOSVC_STRIPE_STANDARD_PRICE`
  (plus `GEOSVC_STRIPE_OVERAGE_PRICE`, the metered price of the overage meter, when set).
  Its id, URL and expiry are stored on the subscription row (`checkoutUrl` answers from
  there: reads never call Stripe); the `checkout.session.expired` webhook clears the URL.
- The billing portal is a Customer Portal session; its URL is a bearer credential for the
  customer's billing, so it is never logged.
- Renewals, payment failures and cancellations arrive as webhooks (`stripe_webhooks`),
  so nothing here renews locally.

Every request has the client timeout `GEOSVC_STRIPE_TIMEOUT_S` (connecting: at most 3 s),
the library's retries (two, with idempotency keys on POSTs), the library's User-Agent,
and passes the Stripe circuit breaker (`app.kit.breaker`, shared through Redis): a request
that ends, after its retries, without an answer, with a 429 or a 5xx is a failure;
`GEOSVC_STRIPE_BREAKER_FAILURES` in a row open it, and for
`GEOSVC_STRIPE_BREAKER_COOLDOWN_S` every Stripe call (checkout, portal, cancel, webhook
re-reads, meter events) fails at once with PAYMENT_PROVIDER_UNAVAILABLE (503,
`retryAfterSeconds`) instead of holding a request thread for the timeouts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import stripe
from sqlmodel import Session

from app.billing import stripe_budget
from app.billing.checkout import Checkout
from app.kit.breaker import CircuitBreaker
from app.kit.config import get_settings
from app.kit.errors import AppError, Conflict, PaymentProviderUnavailable
from app.kit.redis_client import sync_redis
from app.models import StripeCustomer, Subscription

logger = logging.getLogger(__name__)

NETWORK_RETRIES = 2
CONNECT_TIMEOUT_S = 3.0
BREAKER_NAME = "stripe"  # its state: Redis `upstream:breaker:stripe`, metric label `stripe`


def _paused(name: str, retry_after_s: int) -> AppError:
    return PaymentProviderUnavailable(
        "Stripe is failing; calls to it are paused. Try again shortly.",
        retryAfterSeconds=retry_after_s,
    )


def stripe_breaker() -> CircuitBreaker:
    """Built per request (cheap, no round trip) so it follows reloaded Settings."""
    settings = get_settings()
    # a probe may take every attempt's timeout plus the library's backoff (< 1.5 s)
    probe_lease_s = settings.stripe_timeout_s * (NETWORK_RETRIES + 1) + 5
    return CircuitBreaker(
        BREAKER_NAME,
        client=sync_redis(),
        key_prefix=settings.redis_key_prefix,
        failure_threshold=settings.stripe_breaker_failures,
        cooldown_s=settings.stripe_breaker_cooldown_s,
        probe_lease_s=probe_lease_s,
        open_error=_paused,
    )


class GuardedHttpClient(stripe.RequestsClient):
    """The library's requests client with every call (its retries included) counted by
    the breaker: one call is one success or one failure."""

    def __init__(self, timeout_s: float, breaker: Callable[[], CircuitBreaker]) -> None:
        super().__init__(timeout=(min(timeout_s, CONNECT_TIMEOUT_S), timeout_s))
        self._breaker = breaker

    def request_with_retries(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        post_data: Any = None,
        max_network_retries: int | None = None,
        *,
        _usage: list[str] | None = None,
    ) -> tuple[str, int, Mapping[str, str]]:
        breaker = self._breaker()
        passage = breaker.enter()  # raises PaymentProviderUnavailable while open
        try:
            response = super().request_with_retries(
                method, url, headers, post_data, max_network_retries, _usage=_usage
            )
        except stripe.APIConnectionError:
            breaker.failed()
            raise
        status = response[1]
        if status == 429 or status >= 500:
            breaker.failed()
        else:
            breaker.succeeded(passage)  # a 4xx still proves Stripe is up
        return response


@lru_cache(maxsize=4)
def _client(api_key: str, api_base: str, timeout_s: float) -> stripe.StripeClient:
    return stripe.StripeClient(
        api_key,
        base_addresses={"api": api_base},
        http_client=GuardedHttpClient(timeout_s, stripe_breaker),
        max_network_retries=NETWORK_RETRIES,
    )


def stripe_client() -> stripe.StripeClient:
    settings = get_settings()
    if settings.stripe_secret_key is None:
        raise PaymentProviderUnavailable("GEOSVC_STRIPE_SECRET_KEY is not set")
    return _client(
        settings.stripe_secret_key.get_secret_value(),
        settings.stripe_api_base.rstrip("/"),
        settings.stripe_timeout_s,
    )


def _base_url() -> str:
    return get_settings().base_url.rstrip("/")


def as_dict(value: Any) -> dict[str, Any]:
    """A StripeObject as plain data (they are not dicts)."""
    return dict(value.to_dict())


class StripeProvider:
    name = "stripe"
    renews_locally = False

    def __init__(self) -> None:
        self.client = stripe_client()

    def customer_id(self, session: Session, user_id: str) -> str:
        """The account's Stripe Customer, created once (the caller holds the account lock)."""
        known = session.get(StripeCustomer, user_id)
        if known is not None:
            return known.customer_id
        customer = self._call(
            self.client.v1.customers.create,
            {"metadata": {"user_id": user_id}},
            # a retried first checkout finds the customer the lost answer created
            {"idempotency_key": f"geosvc-customer-{user_id}"},
        )
        session.add(StripeCustomer(user_id=user_id, customer_id=customer.id))
        session.flush()
        return str(customer.id)

    def create_checkout(self, session: Session, user_id: str) -> Checkout:
        settings = get_settings()
        if not settings.stripe_standard_price:
            raise PaymentProviderUnavailable("GEOSVC_STRIPE_STANDARD_PRICE is not set")
        stripe_budget.spend(user_id)
        line_items: list[dict[str, Any]] = [
            {"price": settings.stripe_standard_price, "quantity": 1}
        ]
        if settings.stripe_overage_price:
            line_items.append({"price": settings.stripe_overage_price})  # metered: no quantity
        checkout = self._call(
            self.client.v1.checkout.sessions.create,
            {
                "mode": "subscription",
                "customer": self.customer_id(session, user_id),
                "client_reference_id": user_id,
                "line_items": line_items,
                "metadata": {"user_id": user_id},
                "subscription_data": {"metadata": {"user_id": user_id}},
                "success_url": f"{_base_url()}/dashboard/billing?checkout=success",
                "cancel_url": f"{_base_url()}/dashboard/billing?checkout=canceled",
            },
        )
        if not checkout.url:
            raise PaymentProviderUnavailable("Stripe opened a checkout without a URL")
        expires_at = datetime.fromtimestamp(int(checkout.expires_at), UTC)
        return Checkout(str(checkout.id), str(checkout.url), expires_at)

    def portal_url(self, session: Session, user_id: str) -> str:
        stripe_budget.spend(user_id)
        portal = self._call(
            self.client.v1.billing_portal.sessions.create,
            {
                "customer": self.customer_id(session, user_id),
                "return_url": f"{_base_url()}/dashboard/billing",
            },
        )
        return str(portal.url)

    def cancel_at_period_end(self, subscription: Subscription) -> None:
        stripe_budget.spend(subscription.user_id)
        self._call(
            self.client.v1.subscriptions.update,
            self._subscription_id(subscription),
            {"cancel_at_period_end": True},
        )

    @staticmethod
    def _subscription_id(subscription: Subscription) -> str:
        if subscription.provider_ref is None:
            raise PaymentProviderUnavailable("This subscription has no Stripe subscription id")
        return subscription.provider_ref

    def resume(self, subscription: Subscription) -> None:
        stripe_budget.spend(subscription.user_id)
        self._call(
            self.client.v1.subscriptions.update,
            self._subscription_id(subscription),
            {"cancel_at_period_end": False},
        )

    def expire_checkout(self, subscription: Subscription) -> None:
        """POST /v1/checkout/sessions/:id/expire. Stripe refuses (400) a session that is
        no longer open: re-read to say why. Paid meanwhile: Conflict (its webhook makes
        the subscription active); already expired: closed, as asked."""
        stripe_budget.spend(subscription.user_id)
        checkout_id = str(subscription.checkout_id)
        try:
            self._call(self.client.v1.checkout.sessions.expire, checkout_id)
        except PaymentProviderUnavailable as exc:
            if not isinstance(exc.__cause__, stripe.InvalidRequestError):
                raise
            found = as_dict(self._call(self.client.v1.checkout.sessions.retrieve, checkout_id))
            if found.get("status") == "complete":
                raise Conflict(
                    "The checkout was paid a moment ago: the subscription starts as soon "
                    "as Stripe confirms it"
                ) from exc
            if found.get("status") != "expired":
                raise

    def cancel_now(self, subscription: Subscription) -> None:
        """No action budget: an account is deleted once. The overage reported so far is
        invoiced at once (`invoice_now`); the unused part of the month is not refunded."""
        if subscription.status == "incomplete" and subscription.checkout_id:
            try:
                self._call(self.client.v1.checkout.sessions.expire, subscription.checkout_id)
            except PaymentProviderUnavailable:  # already expired, or paid a moment ago
                logger.warning("checkout of %s could not be expired", subscription.user_id)
        if subscription.status in ("active", "past_due") and subscription.provider_ref:
            self._call(
                self.client.v1.subscriptions.cancel,
                subscription.provider_ref,
                {"invoice_now": True, "prorate": False},
            )

    def renew(self, subscription: Subscription) -> bool:
        return True  # not called: Stripe renews and tells us by webhook

    def list_invoices(self, customer_id: str, limit: int) -> dict[str, Any]:
        """GET /v1/invoices?customer=...: the latest `limit`, newest first, as plain data
        (a read: no action budget; `app.billing.invoices` caches it instead)."""
        listed = self._call(self.client.v1.invoices.list, {"customer": customer_id, "limit": limit})
        return {"data": [as_dict(obj) for obj in listed.data], "has_more": listed.has_more}

    def retrieve_subscription(self, subscription_id: str) -> dict[str, Any]:
        return as_dict(self._call(self.client.v1.subscriptions.retrieve, subscription_id))

    @staticmethod
    def _call(method: Any, *args: Any) -> Any:
        try:
            return method(*args)
        except stripe.StripeError as exc:
            # The library's message, never the request: it may carry customer details.
            status = exc.http_status or "no response"
            raise PaymentProviderUnavailable(
                f"Stripe answered {status}: {exc.user_message or 'no message'}"
            ) from exc
