"""What an agent's host sees (issue 37): the data in the text block as well as in
`structuredContent`, a tool list that costs little context, and what each call cost in
its `_meta`, through the real server with the official Python client, both protocol
generations."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.mcp.conftest import FREE_QUOTA, Account, Stack, connect, structured, usage_meta
from tests.mcp.test_tools import GOOD_CALLS, usage

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
# The ceiling for tools/list (41,600 characters before it).
TOOL_LIST_MAX_CHARS = 24_000


def titles(schema: Any) -> list[str]:
    """Every `title` keyword in a schema (a property of that name is not one)."""
    found = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                found.append(value)
            elif key == "properties":
                found += [t for prop in value.values() for t in titles(prop)]
            else:
                found += titles(value)
    elif isinstance(schema, list):
        found += [t for item in schema for t in titles(item)]
    return found


class TestToolList:
    @MODES
    async def test_the_list_fits_in_24000_characters(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            listed = await client.list_tools()

        tools = listed.model_dump(by_alias=True, exclude_none=True, mode="json")["tools"]
        size = len(json.dumps({"tools": tools}))
        assert len(tools) == 6
        assert size <= TOOL_LIST_MAX_CHARS, size
        for tool in tools:
            assert titles(tool["inputSchema"]) == titles(tool["outputSchema"]) == [], tool["name"]
            assert "1 credit" in tool["description"]


class TestTheTextCarriesTheData:
    @MODES
    async def test_every_answer_error_and_batch_is_in_the_text_as_json(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            answers = [await client.call_tool(name, args) for name, args in GOOD_CALLS]
            batch = await client.call_tool("geocode", {"queries": ["Austin, TX", "zzqqxx nowhere"]})
            error = await client.call_tool("get_population", {"postal_code": "00000"})

        for result in [*answers, batch]:
            assert not result.is_error
            summary, data = result.content[0].text.split("\n")
            assert json.loads(data) == result.structured_content  # every field, for Desktop
            assert "{" not in summary
        assert [item["status"] for item in structured(batch)["results"]] == [200, 404]
        assert error.is_error
        assert json.loads(error.content[0].text) == error.structured_content
        assert structured(error)["error"]["code"] == "NOT_FOUND"


class TestCreditsInEveryAnswer:
    @MODES
    async def test_an_answer_says_its_charge_and_the_month_including_itself(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            first = await client.call_tool("get_population", {"postal_code": "10001"})
            second = await client.call_tool("geocode", {"query": "Austin, TX", "limit": 1})

        month = usage(account)
        assert usage_meta(first) == {
            "charged": 1,
            "used": 1,
            "quota": FREE_QUOTA,
            "period": month["period"],
            "state": "ok",
            "resetsAt": usage_meta(first)["resetsAt"],
        }
        assert usage_meta(first)["resetsAt"].endswith("-01T00:00:00.000Z")
        assert (usage_meta(second)["charged"], usage_meta(second)["used"]) == (1, 2)
        assert month["used"] == 2  # `used` counts the call it comes with, as /usage does after

    async def test_failures_and_refusals_are_charged_0(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            ok = await client.call_tool("get_population", {"postal_code": "10001"})
            not_found = await client.call_tool("get_population", {"postal_code": "00000"})
            invalid = await client.call_tool("get_population", {"postal_code": "1"})
            for _ in range(FREE_QUOTA - 1):
                assert not (await client.call_tool("geocode", {"query": "Paris"})).is_error
            refused = await client.call_tool("geocode", {"query": "Paris"})

        assert usage_meta(ok)["used"] == 1
        # reached the meter, failed: nothing charged, the month as admission read it
        assert (usage_meta(not_found)["charged"], usage_meta(not_found)["used"]) == (0, 1)
        assert usage_meta(invalid) == {"charged": 0}  # refused before the meter
        assert structured(refused)["error"]["code"] == "QUOTA_EXCEEDED"
        assert usage_meta(refused) | {"resetsAt": ""} == {
            "charged": 0,
            "used": FREE_QUOTA,
            "quota": FREE_QUOTA,
            "period": usage(account)["period"],
            "state": "warning",
            "resetsAt": "",
        }

    async def test_a_batch_says_the_credits_of_its_items(
        self, stack: Stack, account: Account
    ) -> None:
        queries = ["Austin, TX", "zzqqxx nowhere", "Denver"]
        async with connect(stack.mcp_url, account.api_key, "legacy") as client:
            batch = await client.call_tool("geocode", {"queries": queries})

        assert structured(batch)["credits"] == 2
        assert (usage_meta(batch)["charged"], usage_meta(batch)["used"]) == (2, 2)

    async def test_calls_at_once_count_at_least_themselves_and_never_past_the_month(
        self, stack: Stack, account: Account
    ) -> None:
        """`used` is the count admission read plus the call's own charge: with calls of
        one account at once, an answer may miss the others but never counts past them."""
        async with connect(stack.mcp_url, account.api_key) as client:
            results = await asyncio.gather(
                *(client.call_tool("geocode", {"query": "Austin, TX"}) for _ in range(4))
            )

        used = [usage_meta(result)["used"] for result in results]
        assert all(1 <= count <= 4 for count in used), used
        assert usage(account)["used"] == 4
