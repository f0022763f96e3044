"""One account clicking a Stripe-calling action in a loop is refused after its budget
(GEOSVC_STRIPE_ACTIONS_PER_ACCOUNT, 10 a minute by default) without reaching Stripe; other
accounts are not affected."""

from __future__ import annotations

import httpx

from tests.billing.conftest import customer_of, user_id_of
from tests.fakes.stripe import FakeStripe
from tests.support.factories import sign_up
from tests.support.live_server import LiveServer

BUDGET = 10  # the default


def test_portal_clicks_past_the_budget_are_429_and_cost_stripe_nothing(
    stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
) -> None:
    sign_up(stripe_http)
    answers = [stripe_http.post("/billing/portal") for _ in range(BUDGET)]
    assert [a.status_code for a in answers] == [200] * BUDGET
    customer = customer_of(fake_stripe, user_id_of(stripe_http))
    asked_before = len(fake_stripe.requests())

    refused = [stripe_http.post("/billing/portal") for _ in range(5)]

    assert [r.status_code for r in refused] == [429] * 5
    assert {r.json()["error"]["code"] for r in refused} == {"RATE_LIMITED"}
    assert all(1 <= r.json()["error"]["retryAfterSeconds"] <= 60 for r in refused)
    assert fake_stripe.requests()[asked_before:] == []
    with httpx.Client(base_url=stripe_server.url, timeout=30) as other:
        sign_up(other)
        assert other.post("/billing/portal").status_code == 200
        assert customer_of(fake_stripe, user_id_of(other)) != customer
