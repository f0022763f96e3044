"""The HTTP data API's calls in the request log: a call and a refusal like /mcp's, a
batch as one entry per outcome among its items."""

from __future__ import annotations

import time
from typing import Any

from tests.mcp.conftest import FREE_QUOTA, Stack, connect
from tests.v1.conftest import Client


def wait_for_calls(client: Client, expected: int, deadline_s: float = 10) -> list[dict[str, Any]]:
    deadline = time.monotonic() + deadline_s
    while True:
        calls: list[dict[str, Any]] = client.control.get("/usage/calls").json()["calls"]
        if len(calls) >= expected or time.monotonic() > deadline:
            return calls
        time.sleep(0.05)


def summary(calls: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    return [(c["tool"], c["outcome"], c["calls"], c["credits"]) for c in calls]


class TestRequestLog:
    def test_a_call_and_a_refusal_before_admission(self, client: Client) -> None:
        assert client.api.get("/v1/geocode", params={"query": "Denver"}).status_code == 200
        assert client.api.get("/v1/population", params={"postal_code": "1"}).status_code == 400

        calls = wait_for_calls(client, 2)

        assert summary(calls) == [
            ("get_population", "INVALID_ARGUMENT", 1, 0),
            ("geocode", "OK", 1, 1),
        ]
        assert calls[1]["callId"].startswith("call_")
        assert calls[0]["principal"]["id"] == client.key_id
        assert [c["surface"] for c in calls] == ["v1", "v1"]

    def test_a_batch_is_one_entry_per_outcome(self, client: Client) -> None:
        items = [{"query": "Denver"}] * (FREE_QUOTA - 1) + [{"query": "zzzzqqqq nowhere"}]
        items += [{"query": "Denver"}] * 2  # past the free cap

        response = client.api.post("/v1/geocode/batch", json={"items": items})

        assert response.status_code == 200
        calls = wait_for_calls(client, 3)
        assert sorted(summary(calls)) == [
            ("geocode", "NOT_FOUND", 1, 0),
            ("geocode", "OK", FREE_QUOTA - 1, FREE_QUOTA - 1),
            ("geocode", "QUOTA_EXCEEDED", 2, 0),
        ]
        assert {c["surface"] for c in calls} == {"v1"}
        ran = {c["callId"] for c in calls if c["outcome"] != "QUOTA_EXCEEDED"}
        assert len(ran) == 1  # the batch's task
        assert next(iter(ran)).startswith("call_")

    def test_a_batch_refused_whole_is_one_entry(self, client: Client) -> None:
        bad = [{"query": "Paris"}, "Rome"]  # not a list of calls
        assert client.api.post("/v1/geocode/batch", json={"items": bad}).status_code == 400

        assert summary(wait_for_calls(client, 1)) == [("geocode", "INVALID_ARGUMENT", 1, 0)]

    def test_an_invalid_item_is_an_entry_of_its_own(self, client: Client) -> None:
        items = [{"query": "Paris"}, {"query": "x", "limit": 50}]
        assert client.api.post("/v1/geocode/batch", json={"items": items}).status_code == 200

        calls = wait_for_calls(client, 2)

        assert sorted(summary(calls)) == [
            ("geocode", "INVALID_ARGUMENT", 1, 0),
            ("geocode", "OK", 1, 1),
        ]

    async def test_an_agents_batch_is_logged_the_same(
        self, v1_stack: Stack, client: Client
    ) -> None:
        async with connect(v1_stack.mcp_url, client.api_key) as mcp:
            places = await mcp.call_tool(
                "geocode", {"queries": ["Austin, TX", "zzzzqqqq nowhere", "Denver"], "limit": 1}
            )
        assert not places.is_error

        calls = wait_for_calls(client, 2)

        assert sorted(summary(calls)) == [("geocode", "NOT_FOUND", 1, 0), ("geocode", "OK", 2, 2)]
