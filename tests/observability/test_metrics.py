"""/metrics after real calls: a `geosvc api` of two processes, a real worker, the official
MCP client. Every counter moves by exactly the calls made (deltas around the calls, so
other tests on the same stack do not matter)."""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx
import pytest

from app.kit.clock import period_of, utcnow
from tests.fakes.smtp import FakeSmtp
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import FREE_QUOTA, connect, stop_stack
from tests.observability.conftest import (
    AUTH,
    ObservedStack,
    Samples,
    observed_env,
    poll,
    start_observed_stack,
)
from tests.support.factories import PASSWORD, sign_up, unique_email
from tests.support.fixtures import Backend

TOOL_CALLS = "geosvc_tool_calls_total"
FAILURES = "geosvc_mail_failures_total"


def new_key(stack: ObservedStack) -> tuple[str, str]:
    with httpx.Client(base_url=stack.server.url, timeout=30) as http:
        user_id = str(sign_up(http)["userId"])
        return user_id, http.post("/api-keys", json={"name": "agent"}).json()["plaintext"]


def delta(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return after.get(name, **labels) - before.get(name, **labels)


async def test_counters_move_by_exactly_the_calls_made(
    observed: ObservedStack, upstream: FakeUpstream, redis_url: str
) -> None:
    import redis

    _user_id, key = new_key(observed)
    capped_user, capped_key = new_key(observed)
    store = redis.Redis.from_url(redis_url)
    # The stack is the session's: calls of earlier tests may still be in the outbox, and
    # their drain would count here (seen once: 5 drains for 4 calls).
    poll(lambda: observed.api_metrics().get("geosvc_outbox_events") == 0)
    api_before, worker_before = observed.api_metrics(), observed.worker_metrics()

    async with connect(observed.mcp_url, key) as client:
        for zip_code in ("10001", "94103"):
            assert not (
                await client.call_tool("get_population", {"postal_code": zip_code})
            ).is_error
        assert (await client.call_tool("get_population", {"postal_code": "00000"})).is_error
        assert (await client.call_tool("get_population", {"postal_code": "1001"})).is_error
        # the fake Census API: one clean answer, one after a 503 and a retry
        assert not (await client.call_tool("get_average_income", {"postal_code": "94103"})).is_error
        upstream.fail("census", status=503, count=1)
        assert not (await client.call_tool("get_average_income", {"postal_code": "10001"})).is_error
    # the capped account has used its free credits (as if committed earlier)
    prefix = observed.server.env["GEOSVC_REDIS_KEY_PREFIX"]
    counter = f"{prefix}usage:{{{capped_user}}}:{period_of(utcnow())}"
    store.hset(counter, "used", FREE_QUOTA)
    async with connect(observed.mcp_url, capped_key) as client:
        refused = await client.call_tool("get_population", {"postal_code": "10001"})
        assert refused.is_error
    store.delete(counter)

    api = observed.api_metrics()
    calls = {
        ("get_population", "ok"): 2,
        ("get_population", "not_found"): 1,
        ("get_population", "invalid_argument"): 1,
        ("get_population", "quota_exceeded"): 1,
        ("get_average_income", "ok"): 2,
    }
    for (tool, outcome), count in calls.items():
        assert delta(api_before, api, TOOL_CALLS, tool=tool, outcome=outcome) == count, (
            tool,
            outcome,
        )
    assert delta(api_before, api, "geosvc_tool_call_seconds_count", tool="get_population") == 5
    assert delta(api_before, api, "geosvc_tool_call_seconds_count", tool="get_average_income") == 2
    assert delta(api_before, api, "geosvc_credits_committed_total") == 4
    assert delta(api_before, api, "geosvc_quota_refusals_total") == 1
    refusals = "geosvc_call_refusals_total"
    assert delta(api_before, api, refusals, plan="free", reason="quota") == 1
    assert delta(api_before, api, refusals, plan="free", reason="rate") == 0
    assert api.get("geosvc_reservations_in_flight") == 0
    assert api.get("geosvc_redis_state_up") == 1
    assert api.get("geosvc_broker_up") == 1
    assert api.get("geosvc_database_up") == 1
    for queue in ("tools", "billing"):
        assert api.has("geosvc_queue_depth", queue=queue)
    assert api.get("geosvc_upstream_breaker_state", provider="census") == 0

    # the worker ran the five calls that passed validation and the cap, drained four
    # usage events into the ledger, and asked the fake Census API three times
    def drained() -> bool:
        worker = observed.worker_metrics()
        return delta(worker_before, worker, "geosvc_ledger_drain_lag_seconds_count") >= 4

    poll(drained)
    worker = observed.worker_metrics()
    assert delta(worker_before, worker, "geosvc_ledger_drain_lag_seconds_count") == 4
    assert (
        delta(
            worker_before, worker, "geosvc_celery_tasks_total", task="tools.run", outcome="success"
        )
        == 5
    )
    requests = "geosvc_upstream_requests_total"
    assert delta(worker_before, worker, requests, provider="census", outcome="ok") == 2
    assert (
        delta(worker_before, worker, requests, provider="census", outcome="retryable_status") == 1
    )
    assert delta(worker_before, worker, "geosvc_upstream_retries_total", provider="census") == 1
    assert delta(worker_before, worker, "geosvc_upstream_errors_total", provider="census") == 0
    poll(lambda: observed.api_metrics().get("geosvc_outbox_events") == 0)
    assert observed.api_metrics().get("geosvc_outbox_oldest_event_age_seconds") == 0


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Basic {AUTH['Authorization']}"])
def test_metrics_need_the_token(observed: ObservedStack, header: str | None) -> None:
    headers = {"Authorization": header} if header else {}
    api = httpx.get(f"{observed.server.url}/metrics", headers=headers, timeout=10)
    assert api.status_code == 401
    assert api.json()["error"]["code"] == "UNAUTHENTICATED"
    assert "geosvc_" not in api.text
    worker = httpx.get(observed.worker_metrics_url, headers=headers, timeout=10)
    assert worker.status_code == 401
    assert "geosvc_" not in worker.text


def test_an_unreachable_database_reads_as_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the GeosvcDatabaseUnreachable alert reads (deploy/alerts.yml): 0, not an error."""
    from app.metering.outbox import outbox_stats
    from app.observability.exposition import SharedStateCollector
    from app.runtime import reload_settings

    # nothing listens on the discard port: connection refused at once
    monkeypatch.setenv("GEOSVC_DATABASE_URL", "postgresql://geosvc:x@127.0.0.1:9/geosvc")
    reload_settings()
    try:
        [up] = SharedStateCollector(outbox_stats)._database()
        [sample] = up.samples
    finally:
        monkeypatch.delenv("GEOSVC_DATABASE_URL")
        reload_settings()
    assert (sample.name, sample.value) == ("geosvc_database_up", 0)


def test_the_series_of_the_operations_alerts_read_what_they_say(
    observed: ObservedStack, redis_url: str
) -> None:
    """Issue 55, item 2: what GeosvcBackupTooOld, GeosvcRedisMemoryHigh/Full and
    GeosvcMeterReportsFailing read (deploy/alerts.yml): the newest backup's time as the
    backup recorded it, Redis's memory and maxmemory as INFO gives them, and the meter
    batches not yet sent to Stripe with the age of the oldest."""
    from datetime import timedelta

    import redis
    from sqlmodel import Session, delete

    from app.kit.db import engine_for
    from app.models import StripeMeterReport
    from app.observability.exposition import BACKUP_STATUS_KEY

    store = redis.Redis.from_url(redis_url)
    prefix = observed.server.env["GEOSVC_REDIS_KEY_PREFIX"]
    assert observed.api_metrics().get("geosvc_backup_last_success_timestamp_seconds") == 0
    store.set(f"{prefix}{BACKUP_STATUS_KEY}", "1765000000")
    engine = engine_for(observed.database_url)
    identifier = f"metrics-test-{utcnow().timestamp()}"
    with Session(engine) as session:
        session.add(
            StripeMeterReport(
                user_id="usr_metrics",
                customer_id="cus_metrics",
                period=period_of(utcnow()),
                overage_from=0,
                overage_to=3,
                identifier=identifier,
                created_at=utcnow() - timedelta(minutes=45),
            )
        )
        session.commit()
    try:
        api = observed.api_metrics()
        memory = store.info("memory")
    finally:
        store.delete(f"{prefix}{BACKUP_STATUS_KEY}")
        with Session(engine) as session:
            session.exec(
                delete(StripeMeterReport).where(StripeMeterReport.identifier == identifier)
            )  # type: ignore[call-overload, arg-type]
            session.commit()
        engine.dispose()
    assert api.get("geosvc_backup_last_success_timestamp_seconds") == 1765000000
    assert api.get("geosvc_redis_memory_used_bytes") > 0
    assert api.get("geosvc_redis_memory_max_bytes") == memory["maxmemory"]
    assert api.get("geosvc_meter_reports_unsent") >= 1
    assert 45 * 60 <= api.get("geosvc_meter_report_oldest_unsent_age_seconds") < 50 * 60
    assert (
        observed.api_metrics().get("geosvc_meter_reports_unsent")
        == api.get("geosvc_meter_reports_unsent") - 1
    )


def test_the_worker_counts_mail_the_server_defers_or_refuses(
    backend: Backend,
    fake_upstream: FakeUpstream,
    fake_smtp: FakeSmtp,
    tmp_path: Path,
) -> None:
    """Issue 55, item 2: what GeosvcMailDeferred and GeosvcMailBouncing read. A mail
    server that answers 550 (refused: dropped) and then 451 (deferred: retried until it
    takes the message) moves `geosvc_mail_failures_total` by reason, in the worker that
    mails."""
    if backend.name != "sqlite":
        pytest.skip("the worker's mail counting does not depend on the database")
    env = {
        **observed_env(backend, fake_upstream, f"mail-{secrets.token_hex(3)}"),
        **fake_smtp.env(),
    }
    stack = start_observed_stack(env, tmp_path)
    try:
        with httpx.Client(base_url=stack.server.url, timeout=30) as http:
            fake_smtp.fault = 550
            refused = fake_smtp.refused
            signup = {"email": unique_email("bounce"), "password": PASSWORD}
            assert http.post("/auth/signup", json=signup).status_code == 202
            poll(lambda: fake_smtp.refused > refused)
            poll(lambda: stack.worker_metrics().get(FAILURES, reason="refused") == 1)
            assert stack.worker_metrics().get(FAILURES, reason="deferred") == 0

            fake_smtp.fault = 451
            refused = fake_smtp.refused
            email = unique_email("deferred")
            assert http.post("/auth/signup", json={**signup, "email": email}).status_code == 202
            poll(lambda: fake_smtp.refused > refused)
            poll(lambda: stack.worker_metrics().get(FAILURES, reason="deferred") >= 1)
            fake_smtp.fault = None
            fake_smtp.wait_for(email, "Confirm your e-mail address", deadline_s=60)
            assert stack.worker_metrics().get(FAILURES, reason="refused") == 1
    finally:
        fake_smtp.fault = None
        stop_stack(stack)
