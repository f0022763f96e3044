"""The metered call (`app.tool_calls.service.call_tool`), every outcome, in this process:
only data costs a credit (counted in Redis, its usage event in the outbox); an error of
the tool, a refusal, the deadline and a client that leaves cost nothing and hold nothing;
a request the proxy sends twice is charged once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.kit.db import new_session
from app.kit.errors import DeadlineExceeded, NotFound, QuotaExceeded, RateLimited
from app.kit.redis_client import sync_redis
from app.metering import outbox, retries
from app.metering.keys import outbox_bucket
from app.metering.ledger import ledger_total
from app.runtime import reload_settings
from app.tool_calls.service import ToolAnswer, admit, call_tool, close_admission
from tests.tool_calls.conftest import FREE_CONCURRENCY, FREE_QUOTA, TOOL, Meter

KNOWN = {"postal_code": "10001"}  # the fake Census has it
UNKNOWN = {"postal_code": "00012"}  # not a ZIP code it knows: NOT_FOUND


async def served(meter: Meter, arguments: dict[str, Any]) -> ToolAnswer:
    """`call_tool`, its task run by the in-process worker."""
    call = asyncio.ensure_future(call_tool(meter.principal, TOOL, arguments))
    await meter.worker.serve_one()
    return await call


def assert_nothing_charged_or_held(meter: Meter, used: int | None) -> None:
    assert meter.used() == used
    assert meter.in_flight() == 0
    assert meter.outbox() == []


class TestData:
    async def test_costs_one_credit_counted_with_its_usage_event(self, meter: Meter) -> None:
        answer = await served(meter, KNOWN)

        assert answer.structured["postalCode"] == "10001"
        assert answer.credits_used == 1
        assert answer.reading is not None
        assert answer.reading.charged == 1
        assert meter.used() == 1
        assert meter.in_flight() == 0
        [event] = meter.outbox()
        assert (event.tool, event.credits, event.key_id) == (TOOL, 1, meter.principal.key_id)
        assert event.call_id.startswith("call_")

    async def test_an_answer_from_the_upstream_cache_costs_the_same(self, meter: Meter) -> None:
        await served(meter, KNOWN)
        again = await call_tool(meter.principal, TOOL, KNOWN)  # no worker: the api answers

        assert again.structured["postalCode"] == "10001"
        assert await meter.worker.queued() == 0
        assert again.credits_used == 2
        assert len(meter.outbox()) == 2


class TestFailures:
    async def test_an_error_of_the_tool_costs_nothing(self, meter: Meter) -> None:
        call = asyncio.ensure_future(call_tool(meter.principal, TOOL, UNKNOWN))
        reply = await meter.worker.serve_one()
        with pytest.raises(NotFound) as raised:
            await call

        assert reply["error"]["code"] == "NOT_FOUND"  # the worker's answer, not a task failure
        assert raised.value.reading is not None
        assert raised.value.reading.charged == 0
        assert_nothing_charged_or_held(meter, used=0)  # the counter seeded at admission

    async def test_the_deadline_releases_the_credit(
        self, meter: Meter, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("GEOSVC_TOOL_DEADLINE_S", "0.5")
        reload_settings()

        with pytest.raises(DeadlineExceeded):
            await call_tool(meter.principal, TOOL, KNOWN)  # no worker takes it

        assert_nothing_charged_or_held(meter, used=0)

    async def test_a_client_that_leaves_is_not_charged_even_if_the_answer_comes(
        self, meter: Meter
    ) -> None:
        call = asyncio.ensure_future(call_tool(meter.principal, TOOL, KNOWN))
        task = await meter.worker.take()
        assert meter.in_flight() == 1  # admitted, waiting for its answer

        call.cancel()  # the edge's request is cancelled: the client went away
        with pytest.raises(asyncio.CancelledError):
            await call
        assert meter.in_flight() == 0
        await meter.worker.run(task)  # the worker answers after all: nobody reads it

        assert_nothing_charged_or_held(meter, used=0)


class TestRefusals:
    """Refused at admission: no task is sent, nothing is held or charged."""

    async def test_no_credits_left(self, meter: Meter) -> None:
        meter.set_used(FREE_QUOTA)
        with pytest.raises(QuotaExceeded):
            await call_tool(meter.principal, TOOL, KNOWN)
        assert await meter.worker.queued() == 0
        assert_nothing_charged_or_held(meter, used=FREE_QUOTA)

    async def test_the_keys_rate(self, meter: Meter) -> None:
        meter.spend_key_burst()
        with pytest.raises(RateLimited) as raised:
            await call_tool(meter.principal, TOOL, KNOWN)
        assert raised.value.to_body()["error"]["retryAfterSeconds"] >= 1
        assert await meter.worker.queued() == 0
        assert_nothing_charged_or_held(meter, used=0)

    async def test_too_many_calls_at_once(self, meter: Meter) -> None:
        held = [await admit(meter.principal, TOOL, KNOWN) for _ in range(FREE_CONCURRENCY)]
        with pytest.raises(RateLimited):
            await call_tool(meter.principal, TOOL, KNOWN)
        assert meter.in_flight() == FREE_CONCURRENCY  # only the calls let in
        for admission in held:  # as the edge does when its call never ran
            await close_admission(admission)

        assert await meter.worker.queued() == 0
        assert_nothing_charged_or_held(meter, used=0)


class TestRetriedRequest:
    async def test_the_same_request_twice_is_charged_once(self, meter: Meter) -> None:
        key = retries.retry_key("ab" * 16, meter.principal.user_id, TOOL, KNOWN)
        assert key is not None
        answers = []
        for attempt in range(2):  # the second is answered from the upstream cache
            admission = await admit(meter.principal, TOOL, KNOWN)
            admission.retry_key = key
            call = asyncio.ensure_future(call_tool(meter.principal, TOOL, KNOWN, admission))
            if attempt == 0:
                await meter.worker.serve_one()
            answers.append(await call)

        assert [a.credits_used for a in answers] == [1, 1]
        assert meter.used() == 1
        assert meter.in_flight() == 0
        assert {e.call_id for e in meter.outbox()} == {retries.ledger_call_id(key)}
        # the account's own bucket (on the cluster, one of GEOSVC_OUTBOX_BUCKETS)
        outbox.drain(new_session, sync_redis(), outbox_bucket(meter.principal.user_id))
        with new_session() as session:
            assert ledger_total(session, meter.principal.user_id, meter.period) == 1
