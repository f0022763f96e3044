from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from sqlmodel import Session

from app.kit.db import new_session
from app.models import Subscription
from tests.fakes.stripe import FakeStripe
from tests.support.factories import sign_up
from tests.support.fixtures import Backend, PerBackend, running_server
from tests.support.live_server import LiveServer


@pytest.fixture
def session(use_backend: Backend) -> Iterator[Session]:
    with new_session() as db:
        yield db


def subscribe(client: httpx.Client) -> dict:
    """Start a checkout and pay it on the local checkout page (a same-origin form post)."""
    started = client.post("/subscription")
    assert started.status_code in (200, 201), started.text
    url = started.json()["checkoutUrl"]
    origin = str(client.base_url).rstrip("/")
    paid = client.post(url, headers={"Origin": origin})
    assert paid.status_code == 303, paid.text
    body = client.get("/subscription").json()
    assert body["status"] == "active", body
    return dict(body)


def move_period_end(session: Session, user_id: str, end: datetime) -> None:
    """As if time had passed: the current period ends at `end`."""
    subscription = session.get(Subscription, user_id)
    assert subscription is not None
    subscription.current_period_end = end
    session.add(subscription)
    session.commit()


# --- Stripe: a fake Stripe server, and a live server + worker configured for it ----------

STANDARD_QUOTA = 5  # small, so a test reaches overage in a few calls


@pytest.fixture(scope="session")
def fake_stripe() -> Iterator[FakeStripe]:
    server = FakeStripe().start()
    yield server
    server.stop()


def stripe_env(backend: Backend, fake_stripe: FakeStripe) -> dict[str, str]:
    return backend.env(**fake_stripe.env(), GEOSVC_STANDARD_QUOTA=str(STANDARD_QUOTA))


@pytest.fixture(scope="session")
def stripe_server(
    backend: Backend,
    fake_stripe: FakeStripe,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> LiveServer:
    log_path = tmp_path_factory.mktemp("logs") / f"stripe-server-{backend.name}.log"
    return per_backend.get(
        f"stripe-server-{backend.name}",
        lambda: running_server(stripe_env(backend, fake_stripe), log_path),
    )


@pytest.fixture
def stripe_http(stripe_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stripe_server.url, timeout=30) as client:
        yield client


@pytest.fixture
def use_stripe(
    use_backend: Backend, fake_stripe: FakeStripe, monkeypatch: pytest.MonkeyPatch
) -> Backend:
    """This process's Settings on the backend and the fake Stripe (service-level tests)."""
    settings_from(stripe_env(use_backend, fake_stripe), monkeypatch)
    return use_backend


def settings_from(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's Settings from the GEOSVC_ variables of `env`."""
    from app.runtime import reload_settings

    for key, value in env.items():
        if key.startswith("GEOSVC_"):
            monkeypatch.setenv(key, value)
    reload_settings()


def webhook_url(server: LiveServer) -> str:
    return f"{server.url}/billing/webhooks/stripe"


def user_id_of(client: httpx.Client) -> str:
    return str(client.get("/me").json()["userId"])


def customer_of(fake: FakeStripe, user_id: str) -> str:
    """The one Stripe customer our server created for this account."""
    with fake.state.lock:
        mine = [
            c["id"] for c in fake.state.customers.values() if c["metadata"] == {"user_id": user_id}
        ]
    assert len(mine) == 1, mine
    return str(mine[0])


def session_id_of(checkout_url: str) -> str:
    return checkout_url.rsplit("/", 1)[1]


def start_checkout(client: httpx.Client) -> dict[str, Any]:
    response = client.post("/subscription")
    assert response.status_code == 201, response.text
    return dict(response.json())


def paid_at_stripe(
    client: httpx.Client, fake: FakeStripe
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A new account checks out and pays at Stripe; nothing delivered yet:
    (our answer to POST /subscription, [checkout.session.completed, subscription.created])."""
    sign_up(client)
    started = start_checkout(client)
    return started, fake.complete_checkout(session_id_of(started["checkoutUrl"]))


def subscribed(
    client: httpx.Client, fake: FakeStripe, server: LiveServer
) -> tuple[str, dict[str, Any]]:
    """Pay at Stripe and deliver Stripe's events: (subscription id, GET /subscription)."""
    _, events = paid_at_stripe(client, fake)
    for event in events:
        assert fake.deliver(webhook_url(server), event).status_code == 200
    body = client.get("/subscription").json()
    assert (body["status"], body["plan"]) == ("active", "standard"), body
    return str(events[1]["data"]["object"]["id"]), body
