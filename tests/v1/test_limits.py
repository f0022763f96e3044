"""Rate and concurrency limits on /v1 (a stack with a small free burst and concurrency, as
`tests.mcp.test_tenancy`'s): 429 with Retry-After and the refusing policy in RateLimit,
a batch past the rate answered per item, and a client gone mid-call not charged. On one
Redis and on a Redis Cluster."""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from app.kit.clock import period_of, utcnow
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import DEADLINE_S, Stack, start_stack
from tests.mcp.test_disconnect import reset, wait_until
from tests.mcp.test_tenancy import FREE_BURST, limited_env
from tests.support.fixtures import ON_A_REDIS_CLUSTER_TOO, Backend
from tests.support.redis_cluster import store_for
from tests.v1.conftest import Client, assert_documented, new_client

pytestmark = ON_A_REDIS_CLUSTER_TOO

PYTHON_CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"


@pytest.fixture(scope="module")
def limited(
    backend: Backend, fake_upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    env = limited_env(backend, fake_upstream, "v1-limits")
    stack = start_stack(env, tmp_path_factory.mktemp(f"v1-limits-{backend.name}"))
    yield stack
    stack.server.stop()
    stack.worker.stop(wait=False)


@pytest.fixture
def tenant(limited: Stack) -> Iterator[Client]:
    clients: list[httpx.Client] = []
    yield new_client(limited.server.url, clients)
    for http in clients:
        http.close()


def test_the_python_client_retries_as_retry_after_says_within_its_bounds(tenant: Client) -> None:
    """clients/python's GeoService: a RATE_LIMITED refusal is retried after the Retry-After the
    service gave, at most max_attempts times, never past max_wait_s; nothing is charged."""
    sys.path.insert(0, str(PYTHON_CLIENT))
    try:
        from geosvc_client import GeoService, ServiceError
        from geosvc_client.generated.api.tools import geocode
    finally:
        sys.path.remove(str(PYTHON_CLIENT))
    for _ in range(FREE_BURST):
        assert tenant.api.get("/v1/geocode", params={"query": "Denver"}).status_code == 200
    waits: list[float] = []  # recorded, not waited: the refill here is one call in 20 s
    url = str(tenant.api.base_url)
    service = GeoService(tenant.api_key, url, max_attempts=3, max_wait_s=100, sleep=waits.append)

    with pytest.raises(ServiceError) as refused:
        service.call(geocode, query="Denver")

    assert refused.value.code == "RATE_LIMITED"
    assert refused.value.retryable
    assert len(waits) == 2  # three tries, two waits between them
    assert all(0 < wait <= 20 for wait in waits)
    assert waits[0] >= waits[1]  # each as the service said, the time left to the refill
    impatient = GeoService(tenant.api_key, url, max_wait_s=0.5, sleep=waits.append)
    with pytest.raises(ServiceError):
        impatient.call(geocode, query="Denver")
    assert len(waits) == 2  # the wait asked for is over max_wait_s: no retry
    assert tenant.usage()["used"] == FREE_BURST


def test_over_the_rate_is_429_with_retry_after_and_costs_nothing(tenant: Client) -> None:
    for _ in range(FREE_BURST):
        assert tenant.api.get("/v1/geocode", params={"query": "Denver"}).status_code == 200

    refused = tenant.api.get("/v1/geocode", params={"query": "Denver"})

    assert refused.status_code == 429
    assert_documented(refused)
    error = refused.json()["error"]
    assert (error["code"], error["limit"]) == ("RATE_LIMITED", "key_rate")
    wait = int(refused.headers["retry-after"])  # whole seconds; the body has the fraction
    assert wait >= 1
    assert 0 < error["retryAfterSeconds"] <= wait
    assert refused.headers["ratelimit"] == f'"key";r=0;t={wait}'
    assert refused.headers["ratelimit-policy"].startswith(f'"key";q={FREE_BURST};w=')
    assert tenant.usage()["used"] == FREE_BURST


def test_a_batch_past_the_rate_answers_the_burst_and_refuses_the_rest(tenant: Client) -> None:
    items = [{"query": "Denver"}] * (FREE_BURST + 2)

    response = tenant.api.post("/v1/geocode/batch", json={"items": items})

    assert response.status_code == 200
    results = response.json()["results"]
    assert [item["status"] for item in results] == [200] * FREE_BURST + [429, 429]
    assert results[-1]["error"]["limit"] == "key_rate"
    # the wait is for both refused items, not for the first token (a probe: 26 items
    # refused were each told 0.052 s)
    assert results[-1]["error"]["retryAfterSeconds"] > 20  # a token in 20 s for each
    assert "2 items of this batch" in results[-1]["error"]["message"]
    assert response.json()["credits"] == FREE_BURST
    assert tenant.usage()["used"] == FREE_BURST
    # each policy once (issue 36, item 9: "key" was listed twice), the refusing one empty
    entries = [entry.split(";") for entry in response.headers["ratelimit"].split(", ")]
    names = [entry[0] for entry in entries]
    assert sorted(names) == sorted(set(names)), response.headers["ratelimit"]
    assert entries[names.index('"key"')][1] == "r=0"


def test_a_call_whose_client_reset_the_connection_is_not_charged(
    limited: Stack, tenant: Client, upstream: FakeUpstream
) -> None:
    env = limited.server.env
    store = store_for(env["GEOSVC_REDIS_URL"], cluster=env.get("GEOSVC_REDIS_CLUSTER") == "true")
    prefix = env["GEOSVC_REDIS_KEY_PREFIX"]
    for key in store.scan_iter(match=f"{prefix}upstream:census:*", count=1000):
        store.delete(key)  # the call must reach the (slow) fake, not the answer cache
    in_flight = f"{prefix}usage:{{{tenant.user_id}}}:{period_of(utcnow())}:res"
    upstream.fail("census", hang_s=DEADLINE_S + 2, count=4)
    parts = urlsplit(limited.server.url)
    raw = socket.create_connection((parts.hostname, parts.port), timeout=30)
    raw.sendall(
        (
            f"GET /v1/average-income?postal_code=94103 HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Authorization: Bearer {tenant.api_key}\r\n\r\n"
        ).encode()
    )
    wait_until(lambda: upstream.requests("census") >= 1, "the call to reach the fake")
    assert store.zcard(in_flight) == 1
    reset_at = time.monotonic()

    reset(raw)

    wait_until(lambda: store.zcard(in_flight) == 0, "the reservation to end")
    # Released at once, not at the call's deadline (which ends it within DEADLINE_S too).
    assert time.monotonic() - reset_at < DEADLINE_S / 2
    assert tenant.usage()["used"] == 0
    store.close()
