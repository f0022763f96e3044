"""Stripe checkout, portal and webhooks on the live server against the fake Stripe, both
backends: signatures, duplicates, any order, unknown types, customer reuse."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.billing.conftest import (
    customer_of,
    paid_at_stripe,
    session_id_of,
    start_checkout,
    subscribed,
    user_id_of,
    webhook_url,
)
from tests.fakes.stripe import OVERAGE_PRICE, STANDARD_PRICE, FakeStripe
from tests.support.factories import sign_up
from tests.support.live_server import LiveServer


class TestCheckout:
    def test_opens_a_subscription_checkout_session_for_the_customer(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe
    ) -> None:
        sign_up(stripe_http)
        user_id = user_id_of(stripe_http)

        body = start_checkout(stripe_http)

        assert (body["status"], body["plan"]) == ("incomplete", "free")
        checkout = fake_stripe.state.sessions[session_id_of(body["checkoutUrl"])]
        assert body["checkoutUrl"] == checkout["url"]
        assert checkout["mode"] == "subscription"
        assert checkout["customer"] == customer_of(fake_stripe, user_id)
        assert checkout["client_reference_id"] == user_id
        assert checkout["_line_items"] == [
            {"price": STANDARD_PRICE, "quantity": "1"},
            {"price": OVERAGE_PRICE},
        ]
        assert stripe_http.get("/subscription").json() == body

    def test_a_pending_checkout_is_returned_again(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe
    ) -> None:
        sign_up(stripe_http)
        first = start_checkout(stripe_http)
        sessions_before = len(fake_stripe.state.sessions)

        second = stripe_http.post("/subscription")

        assert second.status_code == 200
        assert second.json() == first
        assert len(fake_stripe.state.sessions) == sessions_before

    def test_an_expired_checkout_is_replaced_by_a_new_one(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        sign_up(stripe_http)
        first = start_checkout(stripe_http)
        expired = fake_stripe.expire_checkout(session_id_of(first["checkoutUrl"]))
        assert fake_stripe.deliver(webhook_url(stripe_server), expired).status_code == 200
        shown = stripe_http.get("/subscription").json()
        assert (shown["status"], shown["checkoutUrl"]) == ("incomplete", None)

        second = start_checkout(stripe_http)  # 201: a new one

        assert second["checkoutUrl"] != first["checkoutUrl"]
        assert fake_stripe.state.sessions[session_id_of(second["checkoutUrl"])]["status"] == "open"

    def test_the_local_checkout_page_cannot_complete_a_stripe_checkout(
        self, stripe_http: httpx.Client
    ) -> None:
        sign_up(stripe_http)
        started = start_checkout(stripe_http)
        local_page = f"/billing/checkout/{session_id_of(started['checkoutUrl'])}"
        origin = {"Origin": str(stripe_http.base_url).rstrip("/")}

        assert stripe_http.get(local_page).status_code == 404
        assert stripe_http.post(local_page, headers=origin).status_code == 404
        assert stripe_http.get("/subscription").json() == started

    def test_409_when_active(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        subscribed(stripe_http, fake_stripe, stripe_server)
        assert stripe_http.post("/subscription").status_code == 409

    def test_the_customer_is_created_once_and_reused(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        subscription_id, _ = subscribed(stripe_http, fake_stripe, stripe_server)
        user_id = user_id_of(stripe_http)
        ended = fake_stripe.end_subscription(subscription_id)
        assert fake_stripe.deliver(webhook_url(stripe_server), ended).status_code == 200
        assert stripe_http.post("/billing/portal").status_code == 200

        again = start_checkout(stripe_http)

        customer = customer_of(fake_stripe, user_id)  # asserts there is exactly one
        assert fake_stripe.state.sessions[session_id_of(again["checkoutUrl"])]["customer"] == (
            customer
        )


class TestPortal:
    def test_answers_a_customer_portal_session_url_never_logged(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        subscribed(stripe_http, fake_stripe, stripe_server)

        response = stripe_http.post("/billing/portal")

        assert response.status_code == 200
        url = response.json()["url"]
        assert url.startswith(f"{fake_stripe.url}/p/session/test_")
        portal = fake_stripe.requests("POST", "/v1/billing_portal/sessions")[-1]
        assert portal.params["customer"] == customer_of(fake_stripe, user_id_of(stripe_http))
        assert portal.params["return_url"] == f"{stripe_server.url}/dashboard/billing"
        assert url.rsplit("/", 1)[1] not in stripe_server.log()


class TestDashboardWithStripe:
    def test_resume_tells_stripe_and_the_portal_button_goes_to_stripe(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        subscription_id, _ = subscribed(stripe_http, fake_stripe, stripe_server)
        same_origin = {"Origin": str(stripe_http.base_url).rstrip("/")}
        assert stripe_http.delete("/subscription").json()["cancelAtPeriodEnd"] is True

        resumed = stripe_http.post("/dashboard/subscription/resume", headers=same_origin)
        portal = stripe_http.post("/dashboard/billing/portal", headers=same_origin)

        assert resumed.status_code == 303
        told = fake_stripe.requests("POST", f"/v1/subscriptions/{subscription_id}")
        assert [r.params for r in told] == [
            {"cancel_at_period_end": "true"},
            {"cancel_at_period_end": "false"},
        ]
        assert stripe_http.get("/subscription").json()["cancelAtPeriodEnd"] is False
        assert portal.status_code == 303
        assert portal.headers["location"].startswith(f"{fake_stripe.url}/p/session/")


class TestWebhookFlow:
    def test_payment_failure_keeps_standard_then_cancel_ends_on_free(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        subscription_id, active = subscribed(stripe_http, fake_stripe, stripe_server)
        period_end = fake_stripe.state.subscriptions[subscription_id]["items"]["data"][0][
            "current_period_end"
        ]
        assert active["currentPeriodEnd"] == time.strftime(
            "%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(period_end)
        )
        url = webhook_url(stripe_server)

        assert fake_stripe.deliver(url, fake_stripe.fail_payment(subscription_id)).is_success
        past_due = stripe_http.get("/subscription").json()
        assert (past_due["status"], past_due["plan"]) == ("past_due", "standard")

        assert fake_stripe.deliver(url, fake_stripe.set_status(subscription_id, "active"))
        cancel = stripe_http.delete("/subscription")
        assert cancel.status_code == 200
        assert cancel.json()["cancelAtPeriodEnd"] is True
        told = fake_stripe.requests("POST", f"/v1/subscriptions/{subscription_id}")
        assert [r.params for r in told] == [{"cancel_at_period_end": "true"}]
        for event in fake_stripe.take_queued_events():  # Stripe's "updated"
            assert fake_stripe.deliver(url, event).status_code == 200
        still = stripe_http.get("/subscription").json()
        assert (still["plan"], still["cancelAtPeriodEnd"]) == ("standard", True)

        assert fake_stripe.deliver(url, fake_stripe.end_subscription(subscription_id)).is_success
        ended = stripe_http.get("/subscription").json()
        assert (ended["status"], ended["plan"]) == ("canceled", "free")
        assert stripe_http.get("/me").json()["entitlements"] == {"hasSubscription": False}


class TestWebhookSafety:
    @pytest.mark.parametrize(
        "how",
        [
            {"secret": "whsec_not_the_right_one"},
            {"timestamp": int(time.time()) - 301},
            {"signature": "t=1,v1=deadbeef"},
            {"signature": ""},
        ],
        ids=["wrong-secret", "stale", "garbage", "missing"],
    )
    def test_a_bad_or_stale_signature_is_400_and_changes_nothing(
        self,
        stripe_http: httpx.Client,
        fake_stripe: FakeStripe,
        stripe_server: LiveServer,
        how: dict[str, Any],
    ) -> None:
        started, (completed, _) = paid_at_stripe(stripe_http, fake_stripe)

        response = fake_stripe.deliver(webhook_url(stripe_server), completed, **how)

        assert response.status_code == 400
        assert response.json()["error"]["code"] == "INVALID_SIGNATURE"
        assert stripe_http.get("/subscription").json() == started
        # the same event, correctly signed, still applies: nothing was recorded
        assert fake_stripe.deliver(webhook_url(stripe_server), completed).status_code == 200
        assert stripe_http.get("/subscription").json()["status"] == "active"

    def test_a_duplicate_event_is_applied_once(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        _, (completed, _) = paid_at_stripe(stripe_http, fake_stripe)
        subscription_id = completed["data"]["object"]["subscription"]
        reads = f"/v1/subscriptions/{subscription_id}"

        first = fake_stripe.deliver(webhook_url(stripe_server), completed)
        second = fake_stripe.deliver(webhook_url(stripe_server), completed)

        assert (first.json(), second.json()) == ({"received": "applied"}, {"received": "duplicate"})
        assert len(fake_stripe.requests("GET", reads)) == 1

    def test_events_in_any_order_end_in_stripes_current_state(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        _, (completed, created) = paid_at_stripe(stripe_http, fake_stripe)
        subscription_id = created["data"]["object"]["id"]
        failed = fake_stripe.fail_payment(subscription_id)
        deleted = fake_stripe.end_subscription(subscription_id)
        url = webhook_url(stripe_server)

        # newest first, then the older ones whose snapshots say active / past due
        for event in (deleted, failed, created, completed):
            assert fake_stripe.deliver(url, event).status_code == 200

        body = stripe_http.get("/subscription").json()
        assert (body["status"], body["plan"]) == ("canceled", "free")

    def test_an_older_subscription_ending_late_leaves_the_newer_one(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        old_id, _ = subscribed(stripe_http, fake_stripe, stripe_server)
        old_deleted = fake_stripe.end_subscription(old_id)
        url = webhook_url(stripe_server)
        assert fake_stripe.deliver(url, old_deleted).status_code == 200
        again = start_checkout(stripe_http)
        for event in fake_stripe.complete_checkout(session_id_of(again["checkoutUrl"])):
            assert fake_stripe.deliver(url, event).status_code == 200

        old_updated = fake_stripe.set_status(old_id, "canceled")
        assert fake_stripe.deliver(url, old_updated).status_code == 200

        body = stripe_http.get("/subscription").json()
        assert (body["status"], body["plan"]) == ("active", "standard")

    def test_an_unknown_event_type_is_2xx(
        self, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        event = {"id": "evt_unknown1", "object": "event", "type": "charge.refunded", "data": {}}
        response = fake_stripe.deliver(webhook_url(stripe_server), event)
        assert response.status_code == 200
        assert response.json() == {"received": "ignored"}

    def test_needs_no_cookie_and_passes_the_cross_site_check(
        self, fake_stripe: FakeStripe, stripe_server: LiveServer
    ) -> None:
        event = {"id": "evt_unknown2", "object": "event", "type": "ping", "data": {}}
        response = fake_stripe.deliver(
            webhook_url(stripe_server),
            event,
            headers={"Origin": "https://stripe.com", "Sec-Fetch-Site": "cross-site"},
        )
        assert response.status_code == 200

    def test_an_oversized_body_is_413(self, stripe_server: LiveServer) -> None:
        response = httpx.post(
            webhook_url(stripe_server),
            content=b"{" + b" " * (600 * 1024) + b"}",
            headers={"Stripe-Signature": "t=1,v1=00", "Content-Type": "application/json"},
        )
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
