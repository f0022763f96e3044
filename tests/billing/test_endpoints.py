"""Subscription, local checkout and billing portal on the live server, both backends."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest
from sqlmodel import Session

from app.kit.clock import iso_ms, period_end, period_of, period_start, utcnow
from tests.billing.conftest import move_period_end, subscribe
from tests.support.factories import sign_up
from tests.support.live_server import LiveServer

NO_SUBSCRIPTION = {
    "plan": "free",
    "status": "none",
    "currentPeriodStart": None,
    "currentPeriodEnd": None,
    "cancelAtPeriodEnd": False,
    "checkoutUrl": None,
}


def this_month() -> tuple[str, str]:
    period = period_of(utcnow())
    return iso_ms(period_start(period)), iso_ms(period_end(period))


def origin_of(client: httpx.Client) -> dict[str, str]:
    return {"Origin": str(client.base_url).rstrip("/")}


class TestGetSubscription:
    def test_none_before_any_checkout(self, http: httpx.Client) -> None:
        sign_up(http)
        response = http.get("/subscription")
        assert response.status_code == 200
        assert response.json() == NO_SUBSCRIPTION


class TestStartCheckout:
    def test_opens_a_checkout_on_the_local_page(
        self, http: httpx.Client, live_server: LiveServer
    ) -> None:
        sign_up(http)

        response = http.post("/subscription")

        assert response.status_code == 201
        body = response.json()
        assert body == {
            **NO_SUBSCRIPTION,
            "status": "incomplete",
            "checkoutUrl": body["checkoutUrl"],
        }
        assert re.fullmatch(
            re.escape(live_server.url) + r"/billing/checkout/chk_[a-z0-9]{24}", body["checkoutUrl"]
        )
        assert http.get("/subscription").json() == body
        assert http.get("/me").json()["entitlements"] == {"hasSubscription": False}

    def test_a_pending_checkout_is_returned_again(self, http: httpx.Client) -> None:
        sign_up(http)
        first = http.post("/subscription")

        second = http.post("/subscription")

        assert (first.status_code, second.status_code) == (201, 200)
        assert second.json() == first.json()

    def test_concurrent_starts_open_one_checkout(
        self, http: httpx.Client, live_server: LiveServer
    ) -> None:
        sign_up(http)

        def start(_: int) -> tuple[int, str]:
            with httpx.Client(base_url=live_server.url, cookies=http.cookies, timeout=30) as c:
                response = c.post("/subscription")
                return response.status_code, response.json()["checkoutUrl"]

        with ThreadPoolExecutor(max_workers=6) as pool:
            answers = list(pool.map(start, range(6)))

        assert sorted(status for status, _ in answers) == [200] * 5 + [201]
        assert len({url for _, url in answers}) == 1

    def test_already_active_is_409(self, http: httpx.Client) -> None:
        sign_up(http)
        subscribe(http)

        response = http.post("/subscription")

        assert response.status_code == 409
        assert response.json()["error"]["code"] == "CONFLICT"
        assert http.get("/subscription").json()["status"] == "active"


class TestLocalCheckout:
    def test_paying_activates_the_standard_plan_for_this_month(self, http: httpx.Client) -> None:
        sign_up(http)
        url = http.post("/subscription").json()["checkoutUrl"]
        page = http.get(url)
        assert page.status_code == 200
        assert f'action="{url.removeprefix(str(http.base_url).rstrip("/"))}"' in page.text

        paid = http.post(url, headers=origin_of(http))

        assert paid.status_code == 303
        assert paid.headers["location"] == "/dashboard/subscription?notice=subscribed"
        start, end = this_month()
        assert http.get("/subscription").json() == {
            "plan": "standard",
            "status": "active",
            "currentPeriodStart": start,
            "currentPeriodEnd": end,
            "cancelAtPeriodEnd": False,
            "checkoutUrl": None,
        }
        assert http.get("/me").json()["entitlements"] == {"hasSubscription": True}
        usage = http.get("/usage").json()
        assert (usage["mode"], usage["quota"]) == ("standard", 100_000)

    def test_paying_twice_is_a_no_op(self, http: httpx.Client) -> None:
        sign_up(http)
        url = http.post("/subscription").json()["checkoutUrl"]
        assert http.post(url, headers=origin_of(http)).status_code == 303
        before = http.get("/subscription").json()

        assert http.post(url, headers=origin_of(http)).status_code == 303

        assert http.get("/subscription").json() == before

    def test_a_cross_site_form_post_is_refused(self, http: httpx.Client) -> None:
        sign_up(http)
        url = http.post("/subscription").json()["checkoutUrl"]

        response = http.post(url, headers={"Origin": "https://evil.example"})

        assert response.status_code == 403
        assert http.get("/subscription").json()["status"] == "incomplete"

    def test_another_users_checkout_is_404(self, live_server: LiveServer) -> None:
        with (
            httpx.Client(base_url=live_server.url) as alice,
            httpx.Client(base_url=live_server.url) as mallory,
        ):
            sign_up(alice)
            sign_up(mallory)
            url = alice.post("/subscription").json()["checkoutUrl"]

            assert mallory.get(url).status_code == 404
            assert mallory.post(url, headers=origin_of(mallory)).status_code == 404
            assert alice.get("/subscription").json()["status"] == "incomplete"
            assert mallory.get("/subscription").json() == NO_SUBSCRIPTION

    def test_unknown_checkout_is_404(self, http: httpx.Client) -> None:
        sign_up(http)
        http.post("/subscription")
        assert http.get("/billing/checkout/chk_unknown").status_code == 404
        response = http.post("/billing/checkout/chk_unknown", headers=origin_of(http))
        assert response.status_code == 404

    def test_signed_out_goes_to_sign_in(self, http: httpx.Client) -> None:
        response = http.get("/billing/checkout/chk_whatever")
        assert response.status_code == 303
        assert response.headers["location"] == "/dashboard/signin"


class TestCancel:
    def test_cancels_at_period_end_and_stays_active(self, http: httpx.Client) -> None:
        sign_up(http)
        active = subscribe(http)

        response = http.delete("/subscription")

        assert response.status_code == 200
        assert response.json() == {**active, "cancelAtPeriodEnd": True}
        assert http.get("/subscription").json() == response.json()
        assert http.get("/me").json()["entitlements"] == {"hasSubscription": True}
        again = http.delete("/subscription")
        assert (again.status_code, again.json()) == (200, response.json())

    @pytest.mark.parametrize("pending", [False, True])
    def test_nothing_active_is_404(self, http: httpx.Client, pending: bool) -> None:
        sign_up(http)
        if pending:
            http.post("/subscription")

        response = http.delete("/subscription")

        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"

    def test_at_period_end_it_is_canceled_and_free(
        self, http: httpx.Client, session: Session
    ) -> None:
        user_id = sign_up(http)["userId"]
        subscribe(http)
        cancelled = http.delete("/subscription").json()
        move_period_end(session, user_id, utcnow() - timedelta(seconds=1))

        # plan_of (via /me and /usage) sees the end before any write settles it
        assert http.get("/me").json()["entitlements"] == {"hasSubscription": False}
        assert http.get("/usage").json()["mode"] == "free"
        body = http.get("/subscription").json()

        assert body["status"] == "canceled"
        assert body["plan"] == "free"
        assert body["currentPeriodStart"] == cancelled["currentPeriodStart"]
        assert body["checkoutUrl"] is None
        assert http.delete("/subscription").status_code == 404
        restarted = http.post("/subscription")
        assert restarted.status_code == 201
        assert restarted.json()["status"] == "incomplete"
        assert restarted.json()["checkoutUrl"]

    def test_an_uncancelled_period_end_renews(self, http: httpx.Client, session: Session) -> None:
        user_id = sign_up(http)["userId"]
        subscribe(http)
        move_period_end(session, user_id, utcnow() - timedelta(seconds=1))

        body = http.get("/subscription").json()

        start, end = this_month()
        assert (body["status"], body["plan"]) == ("active", "standard")
        assert (body["currentPeriodStart"], body["currentPeriodEnd"]) == (start, end)


class TestBillingPortal:
    def test_points_at_the_dashboard_billing_page(
        self, http: httpx.Client, live_server: LiveServer
    ) -> None:
        sign_up(http)

        response = http.post("/billing/portal")

        assert response.status_code == 200
        assert response.json() == {"url": f"{live_server.url}/dashboard/billing"}
        page = http.get(response.json()["url"])
        assert page.status_code == 200
        assert "Billing" in page.text


class TestAuthentication:
    @pytest.mark.parametrize(
        ("method", "path"),
        [
            ("GET", "/subscription"),
            ("POST", "/subscription"),
            ("DELETE", "/subscription"),
            ("DELETE", "/subscription/checkout"),
            ("POST", "/billing/portal"),
            ("GET", "/billing/invoices"),
        ],
    )
    def test_needs_the_session_cookie(self, http: httpx.Client, method: str, path: str) -> None:
        response = http.request(method, path)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"

    @pytest.mark.parametrize(
        ("method", "path"),
        [
            ("POST", "/subscription"),
            ("DELETE", "/subscription"),
            ("DELETE", "/subscription/checkout"),
            ("POST", "/billing/portal"),
        ],
    )
    def test_cross_site_is_403(self, http: httpx.Client, method: str, path: str) -> None:
        sign_up(http)
        response = http.request(method, path, headers={"Origin": "https://evil.example"})
        assert response.status_code == 403
        assert http.get("/subscription").json() == NO_SUBSCRIPTION
