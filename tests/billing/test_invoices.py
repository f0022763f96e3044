"""Invoices and receipts (GET /billing/invoices, the billing page) on the live server, both
backends: the local provider's receipt, and Stripe's invoices read from the fake Stripe
(`GET /v1/invoices`), drafts left out, cached a minute, nothing asked of Stripe for an
account that never reached it."""

from __future__ import annotations

import time

import httpx

from app.kit.clock import iso_ms, period_end, period_of, period_start, utcnow
from tests.billing.conftest import customer_of, subscribe, subscribed, user_id_of
from tests.fakes.stripe import FakeStripe
from tests.support.factories import sign_up
from tests.support.live_server import LiveServer

DAY_S = 24 * 3600


class TestLocalProvider:
    def test_none_before_a_checkout_is_paid(self, http: httpx.Client) -> None:
        sign_up(http)
        http.post("/subscription")  # pending: nothing paid yet

        listed = http.get("/billing/invoices")

        assert listed.status_code == 200
        assert listed.json() == {"invoices": [], "hasMore": False, "provider": "local"}
        assert "No invoices yet." in http.get("/dashboard/billing").text

    def test_the_paid_subscription_is_a_receipt(self, http: httpx.Client) -> None:
        sign_up(http)
        subscribe(http)
        month = period_of(utcnow())

        [receipt] = http.get("/billing/invoices").json()["invoices"]

        assert receipt["status"] == "paid"
        assert (receipt["total"], receipt["amountPaid"], receipt["currency"]) == (4900, 4900, None)
        assert receipt["periodStart"] == iso_ms(period_start(month))
        assert receipt["periodEnd"] == iso_ms(period_end(month))
        assert (receipt["hostedUrl"], receipt["pdfUrl"]) == (None, None)
        page = http.get("/dashboard/billing").text
        assert "$49.00" in page
        assert "test mode: no document" in page

    def test_limit_is_bounded(self, http: httpx.Client) -> None:
        sign_up(http)
        for limit in (0, 25, "x"):
            refused = http.get("/billing/invoices", params={"limit": limit})
            assert refused.status_code == 422
            assert refused.json()["error"]["code"] == "INVALID_ARGUMENT"


class TestStripe:
    def test_an_account_stripe_never_saw_has_none_and_stripe_is_not_asked(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe
    ) -> None:
        sign_up(stripe_http)
        asked = len(fake_stripe.requests("GET", "/v1/invoices"))

        listed = stripe_http.get("/billing/invoices")

        assert listed.json() == {"invoices": [], "hasMore": False, "provider": "stripe"}
        assert len(fake_stripe.requests("GET", "/v1/invoices")) == asked

    def test_invoices_from_stripe_newest_first_without_drafts(
        self, stripe_http: httpx.Client, stripe_server: LiveServer, fake_stripe: FakeStripe
    ) -> None:
        subscribed(stripe_http, fake_stripe, stripe_server)  # its first invoice, paid
        customer = customer_of(fake_stripe, user_id_of(stripe_http))
        now = int(time.time())
        due = fake_stripe.add_invoice(customer, 1250, status="open", created=now + 60)
        fake_stripe.add_invoice(customer, 999, status="draft", created=now + 120)
        asked = len(fake_stripe.requests("GET", "/v1/invoices"))

        listed = stripe_http.get("/billing/invoices")

        assert listed.status_code == 200, listed.text
        body = listed.json()
        assert [i["status"] for i in body["invoices"]] == ["open", "paid"]
        newest, receipt = body["invoices"]
        assert newest["id"] == due["id"]
        assert (newest["total"], newest["amountPaid"], newest["currency"]) == (1250, 0, "usd")
        assert newest["pdfUrl"] == due["invoice_pdf"]
        assert newest["hostedUrl"] == due["hosted_invoice_url"]
        assert (receipt["total"], receipt["amountPaid"]) == (4900, 4900)
        # the service period is the line's: a month from the payment
        assert receipt["periodEnd"] > receipt["periodStart"]
        [request] = fake_stripe.requests("GET", "/v1/invoices")[asked:]
        assert request.params["customer"] == customer

        page = stripe_http.get("/dashboard/billing").text
        assert "12.50 USD" in page
        assert "49.00 USD" in page
        assert due["invoice_pdf"] in page
        # the page read the cached list: one Stripe call for both reads
        assert len(fake_stripe.requests("GET", "/v1/invoices")) == asked + 1

    def test_more_than_a_page_says_so(
        self, stripe_http: httpx.Client, stripe_server: LiveServer, fake_stripe: FakeStripe
    ) -> None:
        subscribed(stripe_http, fake_stripe, stripe_server)
        customer = customer_of(fake_stripe, user_id_of(stripe_http))
        for month in range(1, 4):
            fake_stripe.add_invoice(customer, 4900, created=int(time.time()) - month * 30 * DAY_S)

        body = stripe_http.get("/billing/invoices", params={"limit": 2}).json()

        assert len(body["invoices"]) == 2
        assert body["hasMore"] is True
