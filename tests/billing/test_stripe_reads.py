"""Read paths answer from our database: while a checkout is pending, GET /subscription,
the dashboard's pages and a repeated POST /subscription cost no Stripe request (counted
on the fake Stripe); what webhooks say shows at once. The one exception is the billing
page's invoices, which only Stripe has: one GET /v1/invoices a minute per account, however
often the page is read (`app.billing.invoices`)."""

from __future__ import annotations

from datetime import timedelta

import httpx
from sqlmodel import Session

from app.kit.clock import utcnow
from app.kit.db import new_session
from app.models import Subscription
from tests.billing.conftest import (
    paid_at_stripe,
    session_id_of,
    start_checkout,
    user_id_of,
    webhook_url,
)
from tests.fakes.stripe import FakeStripe
from tests.support.factories import sign_up
from tests.support.fixtures import Backend
from tests.support.live_server import LiveServer

PAGES = ("/", "/dashboard/billing", "/dashboard/subscription", "/dashboard/billing")


def asked_since(fake: FakeStripe, before: int) -> list[tuple[str, str]]:
    """What reached the fake Stripe since `before`, but the invoices' one read a minute."""
    asked = [(r.method, r.path) for r in fake.requests()[before:]]
    invoices = asked.count(("GET", "/v1/invoices"))
    assert invoices <= 1, asked  # the second billing page read the cached list
    return [request for request in asked if request != ("GET", "/v1/invoices")]


class TestPendingCheckout:
    def test_reads_ask_stripe_nothing(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe
    ) -> None:
        sign_up(stripe_http)
        started = start_checkout(stripe_http)
        asked_before = len(fake_stripe.requests())

        for _ in range(50):
            shown = stripe_http.get("/subscription")
            assert shown.status_code == 200
            assert shown.json() == started
        for page in PAGES:
            assert stripe_http.get(page).status_code == 200
        again = stripe_http.post("/subscription")  # the pending one, not a new one

        assert (again.status_code, again.json()) == (200, started)
        assert stripe_http.get("/me").status_code == 200
        assert asked_since(fake_stripe, asked_before) == []
        assert started["checkoutUrl"] in stripe_http.get("/dashboard/subscription").text

    def test_one_past_its_expiry_is_replaced_without_asking_first(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, use_backend: Backend
    ) -> None:
        sign_up(stripe_http)
        first = start_checkout(stripe_http)
        with new_session() as session:
            _expire_stored_checkout(session, user_id_of(stripe_http))
        assert stripe_http.get("/subscription").json()["checkoutUrl"] is None
        asked_before = len(fake_stripe.requests())

        second = start_checkout(stripe_http)  # 201

        assert second["checkoutUrl"] != first["checkoutUrl"]
        asked = [(r.method, r.path) for r in fake_stripe.requests()[asked_before:]]
        assert asked == [("POST", "/v1/checkout/sessions")]  # the customer is known


class TestCompletedByWebhook:
    def test_shows_at_once_and_reads_stay_free(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        started, events = paid_at_stripe(stripe_http, fake_stripe)
        assert stripe_http.get("/subscription").json()["checkoutUrl"] == started["checkoutUrl"]

        for event in events:
            assert fake_stripe.deliver(webhook_url(stripe_server), event).status_code == 200
        asked_before = len(fake_stripe.requests())
        shown = stripe_http.get("/subscription").json()
        pages = [stripe_http.get(page) for page in PAGES]

        assert (shown["status"], shown["plan"], shown["checkoutUrl"]) == (
            "active",
            "standard",
            None,
        )
        assert all(page.status_code == 200 for page in pages)
        assert asked_since(fake_stripe, asked_before) == []
        assert session_id_of(started["checkoutUrl"]) not in pages[2].text


def _expire_stored_checkout(session: Session, user_id: str) -> None:
    """As if a day had passed: the stored checkout's expiry is behind us."""
    row = session.get(Subscription, user_id)
    assert row is not None
    assert row.checkout_expires_at is not None
    row.checkout_expires_at = utcnow() - timedelta(seconds=1)
    session.add(row)
    session.commit()


class TestSubscribeTerms:
    def test_the_page_says_what_stripe_charges_and_the_checkout_asks_no_proration(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe
    ) -> None:
        sign_up(stripe_http)

        page = stripe_http.get("/dashboard/subscription").text
        start_checkout(stripe_http)

        assert "<strong>Subscribing mid-month:</strong> no proration." in page
        assert "Stripe charges $49.00 today for one month from today" in page
        # What the page says holds while checkouts set no billing anchor (Stripe would
        # then prorate the first month) and no trial.
        opened = fake_stripe.requests("POST", "/v1/checkout/sessions")[-1].params
        assert set(opened["subscription_data"]) == {"metadata"}
