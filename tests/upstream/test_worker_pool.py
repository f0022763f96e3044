"""The `tools` worker's default pool is made for waiting: calls that wait on a slow
upstream overlap instead of queueing behind a couple of processes."""

from __future__ import annotations

import asyncio

from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Stack, connect, structured
from tests.upstream.conftest import Caller

CALLS = 16
HANG_S = 2.0


async def test_upstream_calls_wait_side_by_side(
    upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
) -> None:
    upstream.fail("census", hang_s=HANG_S, count=-1)

    async def one(index: int) -> str:
        async with connect(upstream_stack.mcp_url, caller.api_key) as session:
            # a ZIP per call: each is its own upstream request, never a cache hit
            result = await session.call_tool("get_average_income", {"postal_code": f"8{index:04d}"})
            return str(structured(result)["error"]["code"]) if result.is_error else "OK"

    codes = await asyncio.gather(*(one(i) for i in range(CALLS)))

    assert set(codes) == {"NOT_FOUND"}  # the fake knows none of these ZIPs: 204
    arrivals = upstream.arrivals("census")
    assert len(arrivals) == CALLS
    # Each request is held HANG_S by the fake; all arriving within HANG_S of the first
    # means all were in flight at once (a prefork pool of 2 would send 2 per HANG_S).
    assert arrivals[-1] - arrivals[0] < HANG_S
