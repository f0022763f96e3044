"""Cancelling a pending checkout (DELETE /subscription/checkout, the dashboard's button) on
the live server, both backends: with the local provider, and with Stripe (the session
expired at the fake Stripe, its webhook afterwards harmless). A paid or expired checkout
cannot be cancelled; a second click, a replay, another account's checkout id and a
cross-site form change nothing."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.billing.conftest import (
    session_id_of,
    start_checkout,
    subscribe,
    webhook_url,
)
from tests.fakes.stripe import FakeStripe
from tests.support.factories import sign_up
from tests.support.live_server import LiveServer


def origin_of(client: httpx.Client) -> dict[str, str]:
    return {"Origin": str(client.base_url).rstrip("/")}


def cancel_form(client: httpx.Client, checkout_id: str, **headers: str) -> httpx.Response:
    """The dashboard's "Cancel checkout" button: a same-origin form post."""
    return client.post(
        "/dashboard/subscription/checkout/cancel",
        data={"checkout_id": checkout_id},
        headers={**origin_of(client), **headers},
    )


def local_checkout_id(checkout_url: str) -> str:
    return checkout_url.rsplit("/", 1)[1]


def error_code(response: httpx.Response) -> str:
    return str(response.json()["error"]["code"])


class TestLocalProvider:
    def test_a_cancelled_checkout_can_no_longer_be_paid(self, http: httpx.Client) -> None:
        sign_up(http)
        url = start_checkout(http)["checkoutUrl"]

        cancelled = http.delete("/subscription/checkout")

        assert cancelled.status_code == 200
        assert (cancelled.json()["status"], cancelled.json()["checkoutUrl"]) == ("none", None)
        assert http.get("/subscription").json() == cancelled.json()
        assert http.get(url).status_code == 404  # its page
        paid = http.post(url, headers=origin_of(http))
        assert paid.status_code == 404
        assert http.get("/subscription").json()["status"] == "none"
        again = http.post("/subscription")  # a new checkout opens
        assert again.status_code == 201
        assert again.json()["checkoutUrl"] != url

    def test_a_second_cancel_or_a_replay_is_404(self, http: httpx.Client) -> None:
        sign_up(http)
        start_checkout(http)
        assert http.delete("/subscription/checkout").status_code == 200

        replay = http.delete("/subscription/checkout")

        assert replay.status_code == 404
        assert error_code(replay) == "NOT_FOUND"

    def test_a_double_click_closes_it_once(self, http: httpx.Client) -> None:
        sign_up(http)
        start_checkout(http)

        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda _: http.delete("/subscription/checkout"), range(2)))

        assert sorted(answer.status_code for answer in answers) == [200, 404]

    def test_nothing_pending_is_404(self, http: httpx.Client) -> None:
        sign_up(http)
        assert http.delete("/subscription/checkout").status_code == 404

    def test_a_paid_checkout_cannot_be_cancelled(self, http: httpx.Client) -> None:
        sign_up(http)
        subscribe(http)

        refused = http.delete("/subscription/checkout")

        assert refused.status_code == 409
        assert "paid" in refused.json()["error"]["message"]
        assert http.get("/subscription").json()["status"] == "active"

    def test_the_dashboard_button_cancels_and_says_so(self, http: httpx.Client) -> None:
        sign_up(http)
        url = start_checkout(http)["checkoutUrl"]
        page = http.get("/dashboard/subscription")
        assert "Cancel checkout" in page.text

        done = cancel_form(http, local_checkout_id(url))

        assert done.status_code == 303
        assert done.headers["location"].endswith("notice=checkout_canceled")
        assert http.get("/subscription").json()["status"] == "none"
        assert "checkout is cancelled" in http.get(done.headers["location"]).text

    def test_a_stale_page_cancels_nothing(self, http: httpx.Client) -> None:
        """A page that showed an earlier checkout id posts it: the pending one stays."""
        sign_up(http)
        url = start_checkout(http)["checkoutUrl"]

        stale = cancel_form(http, "chk_" + "a" * 24)

        assert stale.headers["location"].endswith("notice=checkout_closed")
        assert http.get("/subscription").json()["checkoutUrl"] == url

    def test_another_accounts_checkout_id_is_not_theirs_to_cancel(
        self, http: httpx.Client, live_server: LiveServer
    ) -> None:
        sign_up(http)
        url = start_checkout(http)["checkoutUrl"]
        with httpx.Client(base_url=live_server.url, timeout=30) as other:
            sign_up(other)

            tried = cancel_form(other, local_checkout_id(url))
            api = other.delete("/subscription/checkout")

        assert tried.headers["location"].endswith("notice=no_checkout")
        assert api.status_code == 404
        assert http.get("/subscription").json()["checkoutUrl"] == url  # still payable
        assert http.get(url).status_code == 200

    def test_a_cross_site_form_is_refused(self, http: httpx.Client) -> None:
        sign_up(http)
        url = start_checkout(http)["checkoutUrl"]

        forged = cancel_form(http, local_checkout_id(url), Origin="https://evil.example")

        assert forged.status_code == 403
        assert http.get("/subscription").json()["checkoutUrl"] == url


class TestStripe:
    def test_the_session_is_expired_at_stripe_and_its_webhook_is_harmless(
        self, stripe_http: httpx.Client, stripe_server: LiveServer, fake_stripe: FakeStripe
    ) -> None:
        sign_up(stripe_http)
        session_id = session_id_of(start_checkout(stripe_http)["checkoutUrl"])
        fake_stripe.take_queued_events()  # other tests' events are theirs

        cancelled = stripe_http.delete("/subscription/checkout")

        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["status"] == "none"
        expire_path = f"/v1/checkout/sessions/{session_id}/expire"
        assert len(fake_stripe.requests("POST", expire_path)) == 1
        assert fake_stripe.state.sessions[session_id]["status"] == "expired"
        [event] = [
            e
            for e in fake_stripe.take_queued_events()
            if e["data"]["object"].get("id") == session_id
        ]
        assert event["type"] == "checkout.session.expired"
        delivered = fake_stripe.deliver(webhook_url(stripe_server), event)
        assert delivered.status_code == 200
        assert stripe_http.get("/subscription").json() == cancelled.json()
        assert stripe_http.post("/subscription").status_code == 201  # a new one opens

    def test_paid_at_stripe_before_its_webhook_is_a_conflict(
        self, stripe_http: httpx.Client, stripe_server: LiveServer, fake_stripe: FakeStripe
    ) -> None:
        sign_up(stripe_http)
        session_id = session_id_of(start_checkout(stripe_http)["checkoutUrl"])
        events = fake_stripe.complete_checkout(session_id)  # paid; nothing delivered yet

        refused = stripe_http.delete("/subscription/checkout")

        assert refused.status_code == 409, refused.text
        assert "paid a moment ago" in refused.json()["error"]["message"]
        for event in events:
            assert fake_stripe.deliver(webhook_url(stripe_server), event).status_code == 200
        assert stripe_http.get("/subscription").json()["status"] == "active"

    def test_an_expired_checkout_cannot_be_cancelled(
        self, stripe_http: httpx.Client, stripe_server: LiveServer, fake_stripe: FakeStripe
    ) -> None:
        sign_up(stripe_http)
        session_id = session_id_of(start_checkout(stripe_http)["checkoutUrl"])
        expired = fake_stripe.expire_checkout(session_id)
        assert fake_stripe.deliver(webhook_url(stripe_server), expired).status_code == 200

        refused = stripe_http.delete("/subscription/checkout")

        assert refused.status_code == 409
        assert "expired" in refused.json()["error"]["message"]

    def test_expired_at_stripe_unheard_here_is_closed_as_asked(
        self, stripe_http: httpx.Client, fake_stripe: FakeStripe
    ) -> None:
        sign_up(stripe_http)
        session_id = session_id_of(start_checkout(stripe_http)["checkoutUrl"])
        fake_stripe.expire_checkout(session_id)  # its webhook is lost

        cancelled = stripe_http.delete("/subscription/checkout")

        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["checkoutUrl"] is None
