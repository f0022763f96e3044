"""Deleting an account ends its Stripe subscription at once (against the fake Stripe):
the subscription is cancelled with what it owes invoiced now, a pending checkout is
expired, and a Stripe that cannot be reached refuses the deletion instead of leaving a
subscription billing an account that no longer exists."""

from __future__ import annotations

import httpx
from sqlalchemy import create_engine
from sqlmodel import Session

from app.models import Subscription
from tests.billing.conftest import session_id_of, start_checkout, subscribed, user_id_of
from tests.fakes.stripe import FakeStripe
from tests.support.factories import PASSWORD, sign_up
from tests.support.live_server import LiveServer

DELETE = {"currentPassword": PASSWORD}


def subscription_row(server: LiveServer, user_id: str) -> Subscription:
    engine = create_engine(server.env["GEOSVC_DATABASE_URL"])
    try:
        with Session(engine) as session:
            row = session.get(Subscription, user_id)
            assert row is not None
            session.expunge(row)
            return row
    finally:
        engine.dispose()


def test_an_active_subscription_is_cancelled_now_and_invoiced(
    stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
) -> None:
    subscription_id, _ = subscribed(stripe_http, fake_stripe, stripe_server)
    user_id = user_id_of(stripe_http)

    response = stripe_http.post("/account/delete", json=DELETE)

    assert response.status_code == 204, response.text
    (cancel,) = fake_stripe.requests("DELETE", f"/v1/subscriptions/{subscription_id}")
    assert cancel.params == {"invoice_now": "true", "prorate": "false"}
    assert fake_stripe.state.subscriptions[subscription_id]["status"] == "canceled"
    row = subscription_row(stripe_server, user_id)
    assert (row.status, row.plan, row.cancel_at_period_end) == ("canceled", "free", False)


def test_a_pending_checkout_is_expired(stripe_http: httpx.Client, fake_stripe: FakeStripe) -> None:
    sign_up(stripe_http)
    checkout = session_id_of(start_checkout(stripe_http)["checkoutUrl"])

    assert stripe_http.post("/account/delete", json=DELETE).status_code == 204

    assert fake_stripe.requests("POST", f"/v1/checkout/sessions/{checkout}/expire")
    assert fake_stripe.state.sessions[checkout]["status"] == "expired"


def test_stripe_down_refuses_the_deletion_and_changes_nothing(
    stripe_http: httpx.Client, fake_stripe: FakeStripe, stripe_server: LiveServer
) -> None:
    subscription_id, _ = subscribed(stripe_http, fake_stripe, stripe_server)
    fake_stripe.set_outage("error")
    try:
        refused = stripe_http.post("/account/delete", json=DELETE)
    finally:
        fake_stripe.set_outage(None)

    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "PAYMENT_PROVIDER_UNAVAILABLE"
    assert stripe_http.get("/me").status_code == 200
    assert stripe_http.get("/subscription").json()["status"] == "active"
    assert stripe_http.post("/account/delete", json=DELETE).status_code == 204
    assert fake_stripe.state.subscriptions[subscription_id]["status"] == "canceled"
