"""What an agent's host sees (issue 37): the data in the text block as well as in
`structuredContent`, a tool list that costs little context, and what each call cost in
its `_meta`, through the real server with the official Python client, both protocol
generations."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from PIL import Image

from app.geodata.catalogue import TOOL_SPECS
from app.mcp.host_views import example_result, host_views
from tests.mcp.conftest import (
    FREE_QUOTA,
    MAP_INLINE_MAX_BYTES,
    Account,
    Stack,
    connect,
    structured,
    usage_meta,
)
from tests.mcp.test_tool_budget import budget_message, over_budget
from tests.mcp.test_tools import GOOD_CALLS, usage
from tests.support.factories import sign_up

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])


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
    async def test_each_tool_fits_its_budget(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            listed = await client.list_tools()

        tools = listed.model_dump(by_alias=True, exclude_none=True, mode="json")["tools"]
        assert len(tools) == len(TOOL_SPECS)
        over = over_budget(tools)
        assert over == {}, budget_message(over)
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


BIG_MAP = {"center": {"lat": 48.85, "lon": 2.35}, "zoom": 5, "width": 1280, "height": 1280}


class TestBigMapsAsLinks:
    @MODES
    async def test_a_big_map_is_a_link_that_costs_no_second_credit(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            small = await client.call_tool("static_map", {"center": {"lat": 0, "lon": 0}})
            big = await client.call_tool("static_map", BIG_MAP)

        assert [block.type for block in small.content] == ["text", "image"]
        assert len(small.content[1].data) <= MAP_INLINE_MAX_BYTES
        assert [block.type for block in big.content] == ["text", "resource_link"]
        link = big.content[1]
        assert (link.mime_type, link.size) == ("image/png", structured(big)["bytes"])
        assert link.uri.startswith(f"{stack.server.url}/v1/static-map/images/")
        fetched = [httpx.get(link.uri) for _ in range(2)]  # a host has no key of ours
        for response in fetched:
            assert response.status_code == 200
            assert response.headers["content-type"] == "image/png"
            assert Image.open(io.BytesIO(response.content)).size == (1280, 1280)
        assert len(fetched[0].content) == link.size
        assert usage(account)["used"] == 2  # the two maps; fetching is free

    async def test_only_the_signature_or_the_owners_key_fetches_it(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            big = await client.call_tool("static_map", BIG_MAP)
        with httpx.Client(base_url=stack.server.url, timeout=30) as http:
            sign_up(http)
            other_key = http.post("/api-keys", json={"name": "other"}).json()["plaintext"]
        signed = big.content[1].uri
        bare = signed.split("?")[0]
        query = dict(parse_qsl(urlsplit(signed).query))
        later = str(int(query["expires"]) + 3600)

        def get(url: str, key: str | None = None) -> int:
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            return httpx.get(url, headers=headers, timeout=30).status_code

        assert get(bare, account.api_key) == 200  # the owner's key, no signature
        assert get(bare, other_key) == 404  # another account's key: as if it did not exist
        assert get(bare) == 401
        assert get(signed.replace(query["signature"], "0" * 64)) == 404
        assert get(signed.replace(query["expires"], later)) == 404  # the expiry is signed
        for forged in ("%C2%B2", "9" * 5000, "+1", ""):  # "²" passes isdigit(); int() raised
            assert get(signed.replace(query["expires"], forged)) == 404, forged
        assert get(f"{stack.server.url}/v1/static-map/images/nosuchimage", account.api_key) == 404


class TestDocumentedViews:
    def test_each_tools_example_carries_every_field_in_both_views(self, geodata_dir: Any) -> None:
        for tool, spec in TOOL_SPECS.items():
            result = example_result(tool)
            fields = set(spec.result_model.model_json_schema(by_alias=True)["properties"])
            desktop = json.loads(result.content[0].text.split("\n")[1])
            assert desktop == result.structured_content, tool
            assert set(desktop) == fields, tool
        assert "### `static_map`" in host_views()
