"""A commit that counted is never followed by an error answer (issue 56): once a call's
commit is on its way, the writes riding with it (the request log's entry, the DEL of the
worker's result) failing do not fail the call, and a commit whose own reply is an error
(Redis may or may not have run it) still answers the data. Either way the client is never
charged for an answer it did not get. The failures are real error replies of the test
Redis: a key of the wrong type where the round trip writes."""

from __future__ import annotations

import asyncio

from app.metering.keys import counter_key, outbox_bucket, outbox_key
from app.request_log.service import log_key
from app.tool_calls.batch import call_tool_batch
from app.tool_calls.service import admit, call_tool
from tests.tool_calls.conftest import TOOL, Meter

KNOWN = {"postal_code": "10001"}


class TestWritesAfterTheCommit:
    async def test_a_failed_request_log_write_still_answers_the_data(self, meter: Meter) -> None:
        meter.store.set(log_key(meter.principal.user_id), "not a sorted set")  # WRONGTYPE

        call = asyncio.ensure_future(call_tool(meter.principal, TOOL, KNOWN))
        await meter.worker.serve_one()
        answer = await call

        assert answer.structured["postalCode"] == "10001"
        assert answer.credits_used == 1
        assert meter.used() == 1
        assert meter.in_flight() == 0
        assert len(meter.outbox()) == 1

    async def test_a_failed_usage_event_push_still_answers_the_data(self, meter: Meter) -> None:
        meter.store.set(outbox_key(outbox_bucket(meter.principal.user_id)), "not a list")

        call = asyncio.ensure_future(call_tool(meter.principal, TOOL, KNOWN))
        await meter.worker.serve_one()
        answer = await call

        assert answer.structured["postalCode"] == "10001"
        assert answer.credits_used == 1  # counted; reconciliation settles the ledger
        assert meter.used() == 1


class TestTheCommitsOwnFailure:
    async def test_a_commit_that_errs_answers_the_data_its_event_carries(
        self, meter: Meter
    ) -> None:
        admission = await admit(meter.principal, TOOL, KNOWN)
        counter = counter_key(meter.principal.user_id, meter.period)
        meter.store.delete(counter)
        meter.store.set(counter, "not a hash")  # the commit's HINCRBY errs after its ZREM

        call = asyncio.ensure_future(call_tool(meter.principal, TOOL, KNOWN, admission))
        await meter.worker.serve_one()
        answer = await call

        # The usage event went to the outbox in the same round trip: the ledger bills
        # this call, so its client must have had the data.
        assert answer.structured["postalCode"] == "10001"
        assert answer.credits_used is None  # the commit's count is unknown
        assert answer.reading is not None
        assert answer.reading.charged == 1
        assert len(meter.outbox()) == 1
        assert meter.in_flight() == 0


class TestABatchsCommit:
    async def test_a_failed_usage_event_push_still_answers_the_items(self, meter: Meter) -> None:
        meter.store.set(outbox_key(outbox_bucket(meter.principal.user_id)), "not a list")

        batch = asyncio.ensure_future(call_tool_batch(meter.principal, TOOL, [KNOWN, KNOWN]))
        await meter.worker.serve_one()
        answer = await batch

        assert [item.structured is not None for item in answer.items] == [True, True]
        assert answer.credits == 2
        assert answer.credits_used == 2
        assert meter.used() == 2
        assert meter.in_flight() == 0
