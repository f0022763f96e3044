"""The request log through the real stack: calls over /mcp (served by the worker, refused
at the edge or by the tool handler) appear in `GET /usage/calls` with their outcome, key,
latency and credits, and nothing of their arguments."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

import httpx
import redis

from tests.mcp.conftest import FREE_QUOTA, Account, Stack, connect
from tests.support.factories import sign_up

Calls = list[dict[str, Any]]


def calls_of(http: httpx.Client, **params: str | int) -> dict[str, Any]:
    response = http.get("/usage/calls", params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())


def wait_for_calls(http: httpx.Client, expected: int, deadline_s: float = 10) -> Calls:
    """The log once it holds `expected` calls (refusals are written after their answer)."""
    deadline = time.monotonic() + deadline_s
    while True:
        calls: Calls = calls_of(http, limit=1000)["calls"]
        if len(calls) >= expected or time.monotonic() > deadline:
            return calls
        time.sleep(0.05)


def moment(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def new_key(http: httpx.Client, name: str) -> tuple[str, str]:
    created = http.post("/api-keys", json={"name": name}).json()
    return created["plaintext"], created["key"]["keyId"]


class TestRequestLog:
    async def test_every_outcome_is_logged_with_its_key_latency_and_credits(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            ok = await client.call_tool("get_population", {"postal_code": "10001"})
            invalid = await client.call_tool("get_population", {"postal_code": "1"})
            missing = await client.call_tool("get_population", {"postal_code": "00000"})
        assert [ok.is_error, invalid.is_error, missing.is_error] == [False, True, True]

        calls = wait_for_calls(account.http, 3)

        assert [call["outcome"] for call in calls] == ["NOT_FOUND", "INVALID_ARGUMENT", "OK"]
        assert [call["credits"] for call in calls] == [0, 0, 1]
        for call in calls:
            assert call["tool"] == "get_population"
            assert call["principal"] == {
                "type": "api_key",
                "id": account.key_id,
                "label": "agent",
                "revoked": False,
            }
            assert call["latencyMs"] >= 0
            assert call["at"].endswith("Z")
        assert calls[0]["latencyMs"] > 0  # a worker's round trip
        assert calls[2]["latencyMs"] > 0
        assert calls[0]["callId"].startswith("call_")  # reached a worker
        assert calls[1]["callId"] is None  # refused before it got one
        assert calls[0]["at"] >= calls[1]["at"] >= calls[2]["at"]
        assert {call["surface"] for call in calls} == {"mcp"}  # a refusal at the edge too

    async def test_refusals_at_the_edge_are_logged_and_filters_narrow(
        self, stack: Stack, account: Account
    ) -> None:
        second, second_id = new_key(account.http, "backup")
        async with connect(stack.mcp_url, account.api_key) as client:
            for _ in range(FREE_QUOTA):
                result = await client.call_tool("geocode", {"query": "Austin, TX", "limit": 1})
                assert not result.is_error
        async with connect(stack.mcp_url, second) as client:
            for _ in range(4):  # refused at the edge: the first, then three within a second
                refused = await client.call_tool("geocode", {"query": "Austin, TX", "limit": 1})
                assert refused.structured_content["error"]["code"] == "QUOTA_EXCEEDED"

        calls = wait_for_calls(account.http, FREE_QUOTA + 2)
        assert len(calls) == FREE_QUOTA + 2
        assert [call["calls"] for call in calls[:3]] == [3, 1, 1]
        for call in calls[:2]:
            assert call["outcome"] == "QUOTA_EXCEEDED"
            assert call["principal"]["label"] == "backup"
            assert call["credits"] == 0

        failed = calls_of(account.http, outcome="error")
        assert [call["outcome"] for call in failed["calls"]] == ["QUOTA_EXCEEDED"] * 2
        assert failed["matched"] == 2
        by_code = calls_of(account.http, outcome="QUOTA_EXCEEDED")
        assert by_code["calls"] == failed["calls"]
        first_key = calls_of(account.http, principal=account.key_id)
        assert first_key["matched"] == FREE_QUOTA
        assert {call["outcome"] for call in first_key["calls"]} == {"OK"}
        assert calls_of(account.http, principal=second_id, outcome="OK")["matched"] == 0
        latest = calls_of(account.http, limit=2)
        assert len(latest["calls"]) == 2
        assert latest["matched"] == FREE_QUOTA + 2
        assert latest["retention"] == {"maxCalls": 1000, "days": 7}

    async def test_a_renamed_or_revoked_key_is_named_as_it_is_now(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            await client.call_tool("get_population", {"postal_code": "10001"})
        wait_for_calls(account.http, 1)
        assert account.http.delete(f"/api-keys/{account.key_id}").status_code == 204

        (call,) = calls_of(account.http)["calls"]

        assert call["principal"]["revoked"] is True
        assert call["principal"]["label"] == "agent"

    async def test_no_arguments_are_stored_and_other_accounts_see_nothing(
        self, stack: Stack, account: Account, redis_url: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            await client.call_tool("geocode", {"query": "Zyxwvu Street", "limit": 1})
        wait_for_calls(account.http, 1)

        store = redis.Redis.from_url(redis_url, decode_responses=True)
        prefix = stack.server.env["GEOSVC_REDIS_KEY_PREFIX"]
        stored = store.lrange(f"{prefix}calls:{{{account.user_id}}}", 0, -1)
        store.close()
        assert len(stored) == 1
        assert "Zyxwvu" not in stored[0]
        assert "geocode" in stored[0]

        with httpx.Client(base_url=stack.server.url, timeout=30) as stranger:
            sign_up(stranger)
            assert calls_of(stranger)["calls"] == []
            assert calls_of(stranger, principal=account.key_id)["calls"] == []


class TestKeysLastUsed:
    async def test_any_call_counts_as_a_use_of_its_key(
        self, stack: Stack, account: Account
    ) -> None:
        _idle_key, idle_id = new_key(account.http, "idle")
        refused_key, refused_id = new_key(account.http, "refused")
        assert account.http.put("/usage/cap", json={"cap": 1}).status_code == 200
        async with connect(stack.mcp_url, account.api_key) as client:
            assert not (await client.call_tool("geocode", {"query": "Austin, TX"})).is_error
        async with connect(stack.mcp_url, refused_key) as client:
            refused = await client.call_tool("geocode", {"query": "Austin, TX"})
            assert refused.is_error  # the account's own cap: refused at the edge
        calls = wait_for_calls(account.http, 2)

        keys = {key["keyId"]: key for key in account.http.get("/api-keys").json()["keys"]}

        assert keys[idle_id]["lastUsedAt"] is None
        assert keys[refused_id]["lastUsedAt"] == calls[0]["at"]
        # the later of its start in the request log and its charge in the ledger
        used = moment(keys[account.key_id]["lastUsedAt"])
        assert moment(calls[1]["at"]) <= used <= moment(calls[1]["at"]) + timedelta(seconds=5)


class TestCallsEndpoint:
    def test_needs_a_session(self, stack: Stack) -> None:
        response = httpx.get(f"{stack.server.url}/usage/calls", timeout=30)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"

    def test_bad_filters_are_invalid_arguments(self, account: Account) -> None:
        for params in ({"principal": "NOT-A-KEY"}, {"outcome": "x" * 40}, {"limit": "0"}):
            response = account.http.get("/usage/calls", params=params)
            assert response.status_code == 422, params
            assert response.json()["error"]["code"] == "INVALID_ARGUMENT"
