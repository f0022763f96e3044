"""Stripe behind the circuit breaker, on a live server of its own against a fake Stripe of
its own (the outage and the open breaker must not reach other tests): with Stripe
answering 500s or hanging, after the breaker opens further Stripe calls answer 503 at
once without reaching Stripe, reads still answer from the database, and after the
cool-down one probe closes it again."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.billing.conftest import start_checkout, stripe_env
from tests.fakes.stripe import FakeStripe
from tests.support.factories import sign_up
from tests.support.fixtures import Backend
from tests.support.live_server import TEST_RUN_PREFIX, LiveServer, start_live_server

FAILURES = 2  # GEOSVC_STRIPE_BREAKER_FAILURES
COOLDOWN_S = 4.0
TIMEOUT_S = 1.0  # per attempt; a call makes three (the library's two retries)
DEADLINE_S = 30.0


@pytest.fixture(scope="module")
def lone_stripe() -> Iterator[FakeStripe]:
    server = FakeStripe().start()
    yield server
    server.set_outage(None)  # frees handlers still hanging
    server.stop()


@pytest.fixture(scope="module")
def guarded_server(
    backend: Backend, lone_stripe: FakeStripe, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    env = {
        **stripe_env(backend, lone_stripe),
        # its own breaker: the shared prefix's breaker is the other Stripe servers'
        "GEOSVC_REDIS_KEY_PREFIX": f"{TEST_RUN_PREFIX}breaker-{secrets.token_hex(3)}:",
        "GEOSVC_STRIPE_BREAKER_FAILURES": str(FAILURES),
        "GEOSVC_STRIPE_BREAKER_COOLDOWN_S": str(COOLDOWN_S),
        "GEOSVC_STRIPE_TIMEOUT_S": str(TIMEOUT_S),
        # the buyer clicks more often than a person would; the budget has its own test
        "GEOSVC_STRIPE_ACTIONS_PER_ACCOUNT": "1000",
    }
    log_path = tmp_path_factory.mktemp("logs") / f"stripe-breaker-{backend.name}.log"
    server = start_live_server(env, log_path)
    yield server
    server.stop()


@contextmanager
def signed_up(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        sign_up(client)
        yield client


def unavailable(response: httpx.Response) -> bool:
    return (
        response.status_code == 503
        and response.json()["error"]["code"] == "PAYMENT_PROVIDER_UNAVAILABLE"
    )


@pytest.mark.parametrize("outage", ["error", "hang"])
def test_an_outage_opens_the_breaker_and_reads_still_answer(
    guarded_server: LiveServer, lone_stripe: FakeStripe, outage: str
) -> None:
    with signed_up(guarded_server) as waiting, signed_up(guarded_server) as buyer:
        pending = start_checkout(waiting)  # before the outage
        lone_stripe.set_outage(outage)
        try:
            for _ in range(FAILURES):  # each reaches Stripe (and its retries) and fails
                assert unavailable(buyer.post("/subscription"))
            reached = len(lone_stripe.requests())

            for _ in range(5):
                started = time.monotonic()
                refused = buyer.post("/subscription")
                # far less than one attempt's timeout: nothing waited for Stripe
                assert time.monotonic() - started < TIMEOUT_S
                assert unavailable(refused), refused.text
                assert refused.json()["error"]["retryAfterSeconds"] >= 1
                assert refused.headers["Retry-After"]
            assert unavailable(buyer.post("/billing/portal"))
            assert unavailable(waiting.get("/billing/invoices"))  # a read that needs Stripe
            billing_page = waiting.get("/dashboard/billing")
            shown = waiting.get("/subscription")
            page = waiting.get("/dashboard/subscription")

            assert len(lone_stripe.requests()) == reached  # nothing more reached Stripe
            assert (shown.status_code, shown.json()) == (200, pending)
            assert page.status_code == 200
            assert pending["checkoutUrl"] in page.text
            assert billing_page.status_code == 200  # the rest of the page, and why not them
            assert "The invoices could not be read just now" in billing_page.text
        finally:
            lone_stripe.set_outage(None)

        # after the cool-down one probe reaches Stripe, succeeds, and closes the breaker
        deadline = time.monotonic() + DEADLINE_S
        while not (opened := buyer.post("/subscription")).status_code == 201:
            assert unavailable(opened), opened.text
            assert time.monotonic() < deadline, "the breaker never closed again"
            time.sleep(0.2)
        assert buyer.post("/billing/portal").status_code == 200
