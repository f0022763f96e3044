"""A batch of calls (`app.tool_calls.batch.call_tool_batch`) in this process: each item
is charged on its own terms, so a batch that crosses the free cap answers the items
past it QUOTA_EXCEEDED, free, and charges the others."""

from __future__ import annotations

import asyncio

from app.tool_calls.batch import call_tool_batch
from tests.tool_calls.conftest import FREE_QUOTA, TOOL, Meter

KNOWN = {"postal_code": "10001"}
UNKNOWN = {"postal_code": "00012"}


class TestCapCrossedMidBatch:
    async def test_items_past_the_cap_are_refused_free(self, meter: Meter) -> None:
        meter.set_used(FREE_QUOTA - 2)
        items = [KNOWN, {"postal_code": "94103"}, KNOWN, KNOWN]
        batch = asyncio.ensure_future(call_tool_batch(meter.principal, TOOL, items))
        task = await meter.worker.take()
        assert len(task.args[1]) == 2  # only the items under the cap are run
        await meter.worker.run(task)
        answer = await batch

        assert [item.structured is not None for item in answer.items] == [1, 1, 0, 0]
        assert [item.error.code for item in answer.items if item.error] == ["QUOTA_EXCEEDED"] * 2
        assert answer.credits == 2
        assert answer.credits_used == FREE_QUOTA
        assert meter.used() == FREE_QUOTA
        assert meter.in_flight() == 0
        assert len(meter.outbox()) == 2

    async def test_an_item_the_tool_fails_is_free_and_the_others_charged(
        self, meter: Meter
    ) -> None:
        batch = asyncio.ensure_future(call_tool_batch(meter.principal, TOOL, [KNOWN, UNKNOWN]))
        await meter.worker.serve_one()
        answer = await batch

        assert answer.items[0].structured is not None
        assert answer.items[1].error is not None
        assert answer.items[1].error.code == "NOT_FOUND"
        assert answer.credits == 1
        assert meter.used() == 1
        assert meter.in_flight() == 0
        assert [event.credits for event in meter.outbox()] == [1]

    async def test_a_batch_with_no_credit_left_runs_nothing(self, meter: Meter) -> None:
        meter.set_used(FREE_QUOTA)
        answer = await call_tool_batch(meter.principal, TOOL, [KNOWN, KNOWN])

        assert [item.error.code for item in answer.items if item.error] == ["QUOTA_EXCEEDED"] * 2
        assert answer.credits == 0
        assert await meter.worker.queued() == 0
        assert meter.used() == FREE_QUOTA
        assert meter.outbox() == []
