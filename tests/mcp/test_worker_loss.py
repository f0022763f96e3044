"""A worker killed with SIGKILL in the middle of tool calls: every caller gets an answer or
a clean DEADLINE_EXCEEDED within the deadline, and nothing is charged twice or for nothing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.billing.conftest import subscribe
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import DEADLINE_S, Stack, connect, mcp_env, start_stack, structured
from tests.support.celery_worker import start_celery_worker
from tests.support.factories import sign_up
from tests.support.fixtures import Backend

CLIENTS = 6
CALLS_PER_CLIENT = 8
# A call may take the deadline plus the MCP and HTTP round trips, which under a full run
# on a slow 2-core machine reached 3.7 s (7.7 s in all); a caller left waiting would
# wait for its 30 s timeout.
ANSWER_WITHIN_S = DEADLINE_S + 5.0


@pytest.fixture
def own_stack(
    backend: Backend, fake_upstream: FakeUpstream, tmp_path: Path
) -> Iterator[tuple[Stack, dict[str, str]]]:
    env = mcp_env(backend, fake_upstream, f"kill-{time.monotonic_ns()}")
    stack = start_stack(env, tmp_path)
    yield stack, env
    stack.server.stop()
    stack.worker.stop(wait=False)


async def test_sigkilled_worker_costs_callers_nothing_and_charges_once(
    own_stack: tuple[Stack, dict[str, str]], upstream: FakeUpstream, tmp_path: Path
) -> None:
    stack, env = own_stack
    http = httpx.Client(base_url=stack.server.url, timeout=30)
    user_id = str(sign_up(http)["userId"])
    subscribe(http)  # standard: no cap, so every call runs
    api_key = http.post("/api-keys", json={"name": "k"}).json()["plaintext"]
    # Slow Census answers keep income calls in flight on the worker when it dies.
    upstream.fail("census", hang_s=1.5, count=-1)
    outcomes: list[tuple[str, float]] = []
    retryable: list[bool] = []  # of each DEADLINE_EXCEEDED

    async def client(index: int) -> None:
        async with connect(stack.mcp_url, api_key) as session:
            for call in range(CALLS_PER_CLIENT):
                if index % 2:
                    name, args = "get_average_income", {"postal_code": f"9{index}{call:03d}"}
                else:
                    name, args = "get_population", {"postal_code": "10001"}
                started = time.monotonic()
                result = await session.call_tool(name, args)
                code = structured(result)["error"]["code"] if result.is_error else "OK"
                if code == "DEADLINE_EXCEEDED":
                    retryable.append(structured(result)["error"].get("retryable") is True)
                outcomes.append((code, time.monotonic() - started))

    async def kill_then_replace() -> None:
        await asyncio.sleep(1.0)
        stack.worker.kill()
        await asyncio.sleep(0.5)
        stack.worker = await asyncio.to_thread(start_celery_worker, env, tmp_path / "w2.log")

    await asyncio.gather(*(client(i) for i in range(CLIENTS)), kill_then_replace())

    codes = [code for code, _ in outcomes]
    assert len(outcomes) == CLIENTS * CALLS_PER_CLIENT
    assert set(codes) <= {"OK", "NOT_FOUND", "DEADLINE_EXCEEDED"}
    assert "DEADLINE_EXCEEDED" in codes  # calls were in flight when the worker died
    assert all(retryable)  # ...and their answers tell a client to retry
    assert max(elapsed for _, elapsed in outcomes) < ANSWER_WITHIN_S
    charged = codes.count("OK")
    assert charged > 0
    assert http.get("/usage").json()["used"] == charged
    deadline = time.monotonic() + 30
    while stack.ledger_count(user_id) != charged and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stack.ledger_count(user_id) == charged
    http.close()
