"""Tenant isolation end to end (issue 20): a real api server and worker, the official MCP
client. Refusals for rate and concurrency arrive as results an agent can act on and cost
nothing; a concurrency slot comes back on every exit path, also when the api process is
killed mid-call (the lease expires); a paying call never waits behind a free backlog.
The refusals and the releases run on a Redis Cluster as well (ON_A_REDIS_CLUSTER_TOO)."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from app.kit.clock import period_of, utcnow
from app.metering import recent_refusals
from tests.billing.conftest import subscribe
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import DEADLINE_S, Stack, connect, mcp_env, start_stack, structured
from tests.mcp.test_disconnect import send_call
from tests.support.celery_worker import launch_celery_worker, wait_until_ready
from tests.support.factories import geocode_call, mcp_headers, sign_up
from tests.support.fixtures import ON_A_REDIS_CLUSTER_TOO, Backend
from tests.support.live_server import launch_live_server, wait_until_healthy
from tests.support.redis_cluster import store_for

FREE_BURST = 4  # per key; the free plan's refill is one token in 20 s
LEASE_S = 8  # reservation TTL: comfortably past the 4 s deadline


@dataclass
class Tenant:
    user_id: str
    api_key: str
    http: httpx.Client


@dataclass
class Limited:
    stack: Stack
    store: redis.Redis
    prefix: str
    logs: Path

    def in_flight(self, tenant: Tenant) -> int:
        key = f"{self.prefix}usage:{{{tenant.user_id}}}:{period_of(utcnow())}:res"
        return int(self.store.zcard(key))

    def used(self, tenant: Tenant) -> int:
        return int(tenant.http.get("/usage").json()["used"])


def limited_env(backend: Backend, upstream: FakeUpstream, name: str) -> dict[str, str]:
    return {
        **mcp_env(backend, upstream, name),
        "GEOSVC_FREE_RATE_PER_S": "0.05",
        "GEOSVC_FREE_BURST": str(FREE_BURST),
        "GEOSVC_FREE_CONCURRENCY": "2",
        "GEOSVC_RESERVATION_TTL_S": str(LEASE_S),
    }


@pytest.fixture(scope="module")
def limited(
    backend: Backend, fake_upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Limited]:
    env = limited_env(backend, fake_upstream, "tenancy")
    logs = tmp_path_factory.mktemp(f"tenancy-{backend.name}")
    stack = start_stack(env, logs)
    store = store_for(env["GEOSVC_REDIS_URL"], cluster=env.get("GEOSVC_REDIS_CLUSTER") == "true")
    yield Limited(stack, store, env["GEOSVC_REDIS_KEY_PREFIX"], logs)
    store.close()
    stack.server.stop()
    stack.worker.stop(wait=False)


def new_tenant(base_url: str, http_clients: list[httpx.Client]) -> Tenant:
    http = httpx.Client(base_url=base_url, timeout=30)
    http_clients.append(http)
    user_id = str(sign_up(http)["userId"])
    key = http.post("/api-keys", json={"name": "agent"}).json()["plaintext"]
    return Tenant(user_id, key, http)


@pytest.fixture
def tenants(limited: Limited) -> Iterator[Callable[[], Tenant]]:
    clients: list[httpx.Client] = []
    yield lambda: new_tenant(limited.stack.server.url, clients)
    for client in clients:
        client.close()


def uncached(limited: Limited) -> None:
    """get_average_income must reach the (faulty) fake, not the answer cache."""
    for key in limited.store.scan_iter(match=f"{limited.prefix}upstream:census:*", count=1000):
        limited.store.delete(key)


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 20.0) -> float:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
    return time.monotonic()


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error
    return dict(structured(result)["error"])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@ON_A_REDIS_CLUSTER_TOO
async def test_over_the_rate_an_agent_is_told_when_to_retry_and_pays_nothing(
    limited: Limited, tenants: Callable[[], Tenant], mode: str
) -> None:
    tenant = tenants()
    async with connect(limited.stack.mcp_url, tenant.api_key, mode) as client:
        for _ in range(FREE_BURST):
            assert not (await client.call_tool("geocode", {"query": "Denver"})).is_error
        started = time.monotonic()
        refused = await client.call_tool("geocode", {"query": "Denver"})
        refusal_s = time.monotonic() - started

    error = error_of(refused)
    assert error["code"] == "RATE_LIMITED"
    assert (error["limit"], error["retryable"]) == ("key_rate", True)
    assert 0 < error["retryAfterSeconds"] <= 20  # one token in 20 s
    assert "No credit was charged" in error["message"]
    assert refusal_s < DEADLINE_S  # answered at admission, never queued
    assert limited.used(tenant) == FREE_BURST
    assert limited.in_flight(tenant) == 0
    metrics = httpx.get(
        f"{limited.stack.server.url}/metrics",
        headers={"Authorization": f"Bearer {limited.stack.server.env['GEOSVC_METRICS_TOKEN']}"},
    ).text
    assert 'geosvc_call_refusals_total{plan="free",reason="rate"}' in metrics


@ON_A_REDIS_CLUSTER_TOO
async def test_a_concurrency_slot_comes_back_after_a_deadline_and_an_error(
    limited: Limited, tenants: Callable[[], Tenant], upstream: FakeUpstream
) -> None:
    tenant = tenants()
    uncached(limited)
    upstream.fail("census", hang_s=DEADLINE_S + 2, count=4)  # past the deadline, both tries
    async with connect(limited.stack.mcp_url, tenant.api_key) as client:
        held = [
            asyncio.create_task(client.call_tool("get_average_income", {"postal_code": zip_code}))
            for zip_code in ("94103", "10001")
        ]
        await asyncio.to_thread(
            wait_until, lambda: upstream.requests("census") >= 2, "both calls upstream"
        )
        assert limited.in_flight(tenant) == 2

        third = await client.call_tool("geocode", {"query": "Denver"})  # while both wait

        error = error_of(third)
        assert (error["code"], error["limit"]) == ("RATE_LIMITED", "concurrency")
        assert "at most 2 calls" in error["message"]
        assert all(not task.done() for task in held)  # refused while they still ran
        for task in held:
            assert error_of(await task)["code"] == "DEADLINE_EXCEEDED"
        assert limited.in_flight(tenant) == 0

        upstream.fail("census", status=500, count=10)  # an upstream error: released too
        failed = await client.call_tool("get_average_income", {"postal_code": "60601"})
        assert error_of(failed)["code"] == "UPSTREAM_UNAVAILABLE"
    assert limited.in_flight(tenant) == 0
    assert limited.used(tenant) == 0


def test_the_slots_of_a_killed_api_process_are_leases_that_expire(
    limited: Limited, tenants: Callable[[], Tenant], upstream: FakeUpstream
) -> None:
    tenant = tenants()
    doomed = wait_until_healthy(
        launch_live_server(limited.stack.server.env, limited.logs / "doomed.log"), 60
    )
    uncached(limited)
    upstream.fail("census", hang_s=DEADLINE_S, count=4)
    before = upstream.requests("census")
    sockets = [send_call(doomed.url, tenant.api_key) for _ in range(2)]
    wait_until(lambda: upstream.requests("census") >= before + 2, "both calls upstream")
    assert limited.in_flight(tenant) == 2
    doomed.process.send_signal(signal.SIGKILL)  # no release, no cleanup
    doomed.process.wait()
    killed_at = time.monotonic()
    for raw in sockets:
        raw.close()

    async def one_call() -> Any:
        async with connect(limited.stack.mcp_url, tenant.api_key) as client:
            return await client.call_tool("geocode", {"query": "Denver"})

    refused = error_of(asyncio.run(one_call()))
    assert refused["limit"] == "concurrency"  # the dead process's calls still hold
    freed_at = wait_until(lambda: limited.in_flight(tenant) == 0, "the leases", LEASE_S + 5)
    assert freed_at - killed_at >= LEASE_S - 2  # held until the lease ended
    assert not asyncio.run(one_call()).is_error
    assert limited.used(tenant) == 1


def test_a_paying_call_never_waits_behind_a_free_backlog(
    backend: Backend, fake_upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Only the paying pool runs (`--queues tools,billing`): free calls wait in
    `tools.free` for a pool that is not there, a standard call is answered meanwhile."""
    env = mcp_env(backend, fake_upstream, "fair")
    logs = tmp_path_factory.mktemp(f"fair-{backend.name}")
    server = launch_live_server(env, logs / "server.log")
    worker = launch_celery_worker(env, logs / "worker.log", queues="tools,billing")
    store = redis.Redis.from_url(env["GEOSVC_REDIS_URL"])
    clients: list[httpx.Client] = []
    try:
        wait_until_ready(worker)
        wait_until_healthy(server, 60)
        free, paying = new_tenant(server.url, clients), new_tenant(server.url, clients)
        subscribe(paying.http)
        free_queue = env["GEOSVC_REDIS_KEY_PREFIX"] + "tools.free"

        async def scenario() -> tuple[list[Any], Any, int]:
            async with (
                connect(f"{server.url}/mcp", free.api_key) as free_client,
                connect(f"{server.url}/mcp", paying.api_key) as paying_client,
            ):
                backlog = [
                    asyncio.create_task(free_client.call_tool("geocode", {"query": "Denver"}))
                    for _ in range(3)
                ]
                await asyncio.to_thread(
                    wait_until, lambda: store.llen(free_queue) == 3, "the free backlog"
                )
                answer = await paying_client.call_tool("geocode", {"query": "Denver"})
                waiting = int(store.llen(free_queue))
                return [await task for task in backlog], answer, waiting

        backlog, answer, waiting = asyncio.run(scenario())

        assert not answer.is_error, answer.content
        assert waiting == 3  # the paying call went past all of them
        assert {error_of(result)["code"] for result in backlog} == {"DEADLINE_EXCEEDED"}
        assert int(free.http.get("/usage").json()["used"]) == 0
        assert int(paying.http.get("/usage").json()["used"]) == 1
    finally:
        for client in clients:
            client.close()
        store.close()
        server.stop()
        worker.stop(wait=False)


@ON_A_REDIS_CLUSTER_TOO
def test_a_call_admitted_but_refused_by_the_mcp_layer_is_released(
    limited: Limited, tenants: Callable[[], Tenant]
) -> None:
    """Admission happens before the MCP transport; a request the transport then refuses
    (here: no `Accept` it can answer) never reaches the tool, and holds nothing."""
    tenant = tenants()
    response = httpx.post(
        limited.stack.mcp_url,
        json={
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "geocode", "arguments": {"query": "Denver"}},
        },
        headers={"Authorization": f"Bearer {tenant.api_key}", "Accept": "text/html"},
        timeout=30,
    )

    assert response.status_code == 406, response.text
    # released once the answer is out: a moment after the client has it
    wait_until(lambda: limited.in_flight(tenant) == 0, "the release", 5)
    assert limited.used(tenant) == 0


def test_a_free_account_at_its_quota_is_refused_again_without_redis_alike(
    limited: Limited, tenants: Callable[[], Tenant]
) -> None:
    """Issue 58: once Redis refused the account's credits, the api answers its next calls
    itself (the counter lowered behind its back still reads as refused), with the same
    answer, charging nothing; within `CREDITS_HELD_S` it asks Redis again."""
    tenant = tenants()
    counter = f"{limited.prefix}usage:{{{tenant.user_id}}}:{period_of(utcnow())}"
    limited.store.hset(counter, "used", 1000)  # the free quota (GEOSVC_FREE_QUOTA's default)
    body, headers = geocode_call(9), mcp_headers(tenant.api_key)
    with httpx.Client(timeout=30) as http:
        first = http.post(limited.stack.mcp_url, json=body, headers=headers)
        refused_at = time.monotonic()
        limited.store.hset(counter, "used", 0)
        again = http.post(limited.stack.mcp_url, json=body, headers=headers)
        assert time.monotonic() - refused_at < recent_refusals.CREDITS_HELD_S, "too slow"

        assert first.json()["result"]["structuredContent"]["error"]["code"] == "QUOTA_EXCEEDED"
        assert (again.status_code, again.json()) == (first.status_code, first.json())
        assert again.headers.get("retry-after") == first.headers.get("retry-after")
        assert limited.used(tenant) == 0
        assert limited.in_flight(tenant) == 0
        # the remembered refusal lasts at most CREDITS_HELD_S: Redis admits it now
        deadline = refused_at + recent_refusals.CREDITS_HELD_S + 10
        while (
            http.post(limited.stack.mcp_url, json=body, headers=headers)
            .json()["result"]
            .get("isError")
        ):
            assert time.monotonic() < deadline, "still refused long after it lifted"
            time.sleep(0.05)


async def test_a_client_refused_again_inside_its_wait_is_read_after_the_wait(
    limited: Limited, tenants: Callable[[], Tenant]
) -> None:
    """Issue 58: a refusal given from memory (the client came back inside the wait it
    was told) is answered at once, but its connection's next request is read only once
    that wait is over, and then answered as any other: here with data, since the quota
    was lifted meanwhile. Another connection of the same key is not held, nor is a
    connection from a configured proxy (the test servers trust 127.0.0.1: the flooding
    client calls from 127.0.0.2)."""
    tenant = tenants()
    counter = f"{limited.prefix}usage:{{{tenant.user_id}}}:{period_of(utcnow())}"
    limited.store.hset(counter, "used", 1000)  # the free quota (GEOSVC_FREE_QUOTA's default)
    body, headers = geocode_call(3), mcp_headers(tenant.api_key)
    url = limited.stack.mcp_url

    def client_from(address: str) -> httpx.AsyncClient:
        transport = httpx.AsyncHTTPTransport(local_address=address)
        return httpx.AsyncClient(timeout=30, transport=transport)

    async with (
        client_from("127.0.0.2") as flooding,
        client_from("127.0.0.2") as other,
        client_from("127.0.0.1") as proxy,
    ):
        first_sent = time.monotonic()
        first = await flooding.post(url, json=body, headers=headers)  # Redis refuses
        again = await flooding.post(url, json=body, headers=headers)  # from memory
        answered_again = time.monotonic()
        limited.store.hset(counter, "used", 0)
        assert first.json()["result"]["structuredContent"]["error"]["code"] == "QUOTA_EXCEEDED"
        assert (again.status_code, again.json()) == (first.status_code, first.json())
        assert answered_again - first_sent < recent_refusals.CREDITS_HELD_S, "too slow"

        finished: list[str] = []

        async def call(client: httpx.AsyncClient, name: str) -> httpx.Response:
            response = await client.post(url, json=body, headers=headers)
            finished.append(name)
            return response

        held = asyncio.create_task(call(flooding, "held"))
        fresh = await call(other, "fresh")  # a new connection: read at once
        via_proxy = [await call(proxy, "proxy") for _ in range(2)]  # refused, then read at once
        served = await held
        served_at = time.monotonic()
    # the held request was read no sooner than the remembered refusal's end, which is at
    # least CREDITS_HELD_S after the first request was sent
    assert served_at - first_sent >= recent_refusals.CREDITS_HELD_S
    assert finished == ["fresh", "proxy", "proxy", "held"]
    assert not served.json()["result"].get("isError"), served.text
    answers = [fresh, *via_proxy, served]
    assert all(response.status_code == 200 for response in answers)
    served_here = sum(not response.json()["result"].get("isError") for response in answers)
    assert limited.used(tenant) == served_here  # refusals cost nothing
    assert limited.in_flight(tenant) == 0


async def test_a_rate_refusal_holds_its_connection_for_the_wait_it_announced(
    limited: Limited, tenants: Callable[[], Tenant]
) -> None:
    """Issue 58: Redis's rate refusal (one token in 20 s here) holds the connection for
    its wait, at most GEOSVC_HTTP_REFUSED_HOLD_MAX_S (1 s): the next call on it is read
    a second later and refused again, from memory, in the same envelope; neither costs
    anything."""
    tenant = tenants()
    body = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "geocode", "arguments": {"query": "Denver"}},
    }
    headers = {
        "Authorization": f"Bearer {tenant.api_key}",
        "Accept": "application/json, text/event-stream",
    }
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.3")  # not a trusted proxy
    async with httpx.AsyncClient(timeout=30, transport=transport) as http:
        for _ in range(FREE_BURST):
            served = await http.post(limited.stack.mcp_url, json=body, headers=headers)
            assert not served.json()["result"].get("isError"), served.text
        refused_sent = time.monotonic()
        refused = await http.post(limited.stack.mcp_url, json=body, headers=headers)
        again = await http.post(limited.stack.mcp_url, json=body, headers=headers)
        again_at = time.monotonic()

    first, second = (error_of_answer(answer) for answer in (refused, again))
    assert (first["limit"], second["limit"]) == ("key_rate", "key_rate")
    assert first["retryAfterSeconds"] > 1  # so the hold is the whole second
    assert again_at - refused_sent >= 1.0
    assert first.keys() == second.keys()
    assert limited.used(tenant) == FREE_BURST
    assert limited.in_flight(tenant) == 0


def error_of_answer(answer: httpx.Response) -> dict[str, Any]:
    result = answer.json()["result"]
    assert result["isError"], answer.text
    return dict(result["structuredContent"]["error"])
