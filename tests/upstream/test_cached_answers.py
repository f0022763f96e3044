"""Answers the shared upstream cache already holds are served by the api process itself:
no Celery task, no upstream request, and still one metered credit."""

from __future__ import annotations

from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Stack, connect, structured
from tests.upstream.conftest import Caller

TASK = "tools.run"


async def test_a_cache_hit_is_answered_without_a_worker_and_charged(
    upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
) -> None:
    async with connect(upstream_stack.mcp_url, caller.api_key) as session:
        first = await session.call_tool("get_average_income", {"postal_code": "10001"})
        assert not first.is_error
        tasks_before = upstream_stack.worker.tasks_run(TASK)
        second = await session.call_tool("get_average_income", {"postal_code": "10001"})

    assert not second.is_error
    assert structured(second) == structured(first)
    assert upstream.requests("census") == 1
    assert upstream_stack.worker.tasks_run(TASK) == tasks_before  # no Celery hop
    assert caller.used() == 2  # a hit is still a successful, metered call


async def test_a_cached_not_found_costs_nothing(
    upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
) -> None:
    async with connect(upstream_stack.mcp_url, caller.api_key) as session:
        await session.call_tool("get_average_income", {"postal_code": "00012"})
        tasks_before = upstream_stack.worker.tasks_run(TASK)
        again = await session.call_tool("get_average_income", {"postal_code": "00012"})

    assert structured(again)["error"]["code"] == "NOT_FOUND"
    assert upstream.requests("census") == 1
    assert upstream_stack.worker.tasks_run(TASK) == tasks_before
    assert caller.used() == 0


async def test_cached_answers_outlive_an_upstream_outage(
    upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
) -> None:
    async with connect(upstream_stack.mcp_url, caller.api_key) as session:
        fresh = await session.call_tool("get_average_income", {"postal_code": "94103"})
        upstream.fail("census", status=503, count=-1)
        cached = await session.call_tool("get_average_income", {"postal_code": "94103"})
        other = await session.call_tool("get_average_income", {"postal_code": "10002"})

    assert structured(cached) == structured(fresh)
    assert structured(other)["error"]["code"] == "UPSTREAM_UNAVAILABLE"
    assert caller.used() == 2  # the fresh and the cached answer; the outage is free


async def test_an_area_is_left_to_the_worker_and_never_loads_the_indices_in_the_api(
    upstream_stack: Stack, caller: Caller
) -> None:
    # The api answers cache hits on its event loop: an area needs the embedded indices to
    # be resolved, and loading them there would stall every call the process holds.
    args = {"area": "Travis County, Texas"}
    async with connect(upstream_stack.mcp_url, caller.api_key) as session:
        first = await session.call_tool("get_average_income", args)
        tasks_before = upstream_stack.worker.tasks_run(TASK)
        again = await session.call_tool("get_average_income", args)

    assert not first.is_error
    assert structured(again) == structured(first)
    assert upstream_stack.worker.tasks_run(TASK) == tasks_before + 1  # the worker's
    assert "geodata indices loaded" not in upstream_stack.server.log()
