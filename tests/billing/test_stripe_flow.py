"""The whole Stripe flow on a live server and a real worker, both backends: checkout ->
webhook -> standard -> overage meter events (a retried batch counted once) -> cancel ->
webhook -> free."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlmodel import select

from app.billing.meter_reports import REPORT_TASK
from app.kit.clock import period_of, utcnow
from app.kit.db import new_session
from app.metering.ledger import ledger_total
from app.metering.outbox import DRAIN_TASK
from app.metering.schemas import UsageEventIn
from app.models import StripeMeterReport
from beat_schedule import BEAT_SCHEDULE
from tests.billing.conftest import (
    STANDARD_QUOTA,
    customer_of,
    settings_from,
    stripe_env,
    subscribed,
    user_id_of,
    webhook_url,
)
from tests.fakes.stripe import METER_EVENT, FakeStripe
from tests.metering.conftest import put_in_outbox
from tests.support.celery_worker import CeleryWorker, start_celery_worker
from tests.support.fixtures import Backend
from tests.support.live_server import TEST_RUN_PREFIX, LiveServer, start_live_server

DEADLINE_S = 30.0


# The flow's own Redis key space: its server and its worker are the only ones on its
# queues. A worker of another module in this test process, on the shared key space and
# without the fake Stripe, took the flow's drain and report tasks when the two met there.
FLOW_PREFIX = f"{TEST_RUN_PREFIX}stripe-flow:"


@pytest.fixture(scope="module")
def flow_env(backend: Backend, fake_stripe: FakeStripe) -> dict[str, str]:
    return {**stripe_env(backend, fake_stripe), "GEOSVC_REDIS_KEY_PREFIX": FLOW_PREFIX}


@pytest.fixture(scope="module")
def flow_server(
    flow_env: dict[str, str], backend: Backend, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    server = start_live_server(flow_env, tmp_path_factory.mktemp("logs") / "flow-server.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def flow_worker(
    flow_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CeleryWorker]:
    log_path = tmp_path_factory.mktemp("logs") / "flow-worker.log"
    worker = start_celery_worker(flow_env, log_path, queues="billing", concurrency=1)
    yield worker
    worker.stop(wait=False)


@pytest.fixture
def flow_http(flow_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=flow_server.url, timeout=30) as client:
        yield client


@pytest.fixture
def use_flow(
    use_backend: Backend, flow_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """This process's Settings on the flow's database, fake Stripe and key space."""
    settings_from(flow_env, monkeypatch)


def record_usage(worker: CeleryWorker, user_id: str, calls: int) -> None:
    """Successful calls, as they leave the outbox; drained into the ledger by the worker."""
    now = utcnow()
    with new_session() as session:
        expected = ledger_total(session, user_id, period_of(now)) + calls
    put_in_outbox(
        [
            UsageEventIn(
                call_id=secrets.token_hex(8),
                user_id=user_id,
                tool="geocode",
                period=period_of(now),
                created_at=now,
            )
            for _ in range(calls)
        ]
    )
    worker.client.send_task(DRAIN_TASK, queue="billing")
    deadline = time.monotonic() + DEADLINE_S
    while True:
        with new_session() as session:
            if ledger_total(session, user_id, period_of(now)) == expected:
                return
        assert time.monotonic() < deadline, "usage never reached the ledger"
        time.sleep(0.05)


def run_report(worker: CeleryWorker) -> Any:
    return worker.client.send_task(REPORT_TASK, queue="billing").get(timeout=DEADLINE_S)


def meter_values(fake: FakeStripe, customer: str) -> list[str]:
    return [e["payload"]["value"] for e in fake.meter_events(customer)]


def test_checkout_to_overage_to_cancel(
    use_flow: None,
    flow_http: httpx.Client,
    flow_server: LiveServer,
    flow_worker: CeleryWorker,
    fake_stripe: FakeStripe,
) -> None:
    # checkout -> webhooks -> standard
    subscription_id, active = subscribed(flow_http, fake_stripe, flow_server)
    user_id = user_id_of(flow_http)
    customer = customer_of(fake_stripe, user_id)
    assert flow_http.get("/usage").json()["quota"] == STANDARD_QUOTA

    # within the quota: nothing to report
    record_usage(flow_worker, user_id, STANDARD_QUOTA)
    run_report(flow_worker)
    assert meter_values(fake_stripe, customer) == []

    # overage, in batches
    record_usage(flow_worker, user_id, 3)
    run_report(flow_worker)
    record_usage(flow_worker, user_id, 2)
    run_report(flow_worker)
    assert meter_values(fake_stripe, customer) == ["3", "2"]
    assert {e["event_name"] for e in fake_stripe.meter_events(customer)} == {METER_EVENT}

    # a batch whose answer is lost is retried with its identifier and counted once
    record_usage(flow_worker, user_id, 4)
    fake_stripe.lose_answers("/v1/billing/meter_events", 10)
    try:
        run_report(flow_worker)
    finally:
        fake_stripe.lose_answers("/v1/billing/meter_events", 0)
    run_report(flow_worker)
    run_report(flow_worker)
    assert meter_values(fake_stripe, customer) == ["3", "2", "4"]
    with new_session() as session:
        batches = session.exec(
            select(StripeMeterReport).where(StripeMeterReport.user_id == user_id)
        ).all()
    assert [(b.overage_from, b.overage_to, b.sent_at is not None) for b in batches] == [
        (0, 3, True),
        (3, 5, True),
        (5, 9, True),
    ]

    # cancel -> Stripe ends it at the period end -> webhook -> free
    assert flow_http.delete("/subscription").status_code == 200
    url = webhook_url(flow_server)
    for event in fake_stripe.take_queued_events():
        assert fake_stripe.deliver(url, event).status_code == 200
    assert flow_http.get("/subscription").json()["plan"] == "standard"
    assert fake_stripe.deliver(url, fake_stripe.end_subscription(subscription_id)).is_success
    ended = flow_http.get("/subscription").json()
    assert (ended["status"], ended["plan"]) == ("canceled", "free")
    assert flow_http.get("/usage").json()["mode"] == "free"


def test_beat_runs_the_report_every_five_minutes() -> None:
    entry = BEAT_SCHEDULE["report-stripe-meter-events"]
    assert entry["task"] == REPORT_TASK
    assert entry["schedule"].minute == set(range(0, 60, 5))
