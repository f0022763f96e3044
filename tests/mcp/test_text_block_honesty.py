"""What an agent reads, from the text block alone (Claude Desktop shows its model nothing
else), for three classes of issue 52: postal codes the data holds only at their city's
point (item 5), maps wider than the world at zoom 0 (item 6), and city populations
without a year (item 7). Each must say plainly what the data cannot, in the text."""

from __future__ import annotations

import json
from typing import Any

from tests.mcp.conftest import Account, Stack, connect


async def text_of(stack: Stack, account: Account, tool: str, arguments: dict[str, Any]) -> str:
    async with connect(stack.mcp_url, account.api_key) as client:
        result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


class TestCollapsedPostalCodes:
    async def test_a_code_at_its_citys_point_says_so_in_the_first_line(
        self, stack: Stack, account: Account
    ) -> None:
        text = await text_of(stack, account, "geocode", {"query": "EC1A", "country": "GB"})
        summary = text.split("\n", 1)[0]
        assert "only its town's position" in summary
        assert "not where in the town it is" in summary

    async def test_nearby_codes_at_the_citys_point_are_not_ranked_as_if_exact(
        self, stack: Stack, account: Account
    ) -> None:
        # London's centroid: 42 districts sit on this very point in the postal data
        arguments = {"lat": 51.5085, "lon": -0.1257, "category": "postal_code", "radius_m": 1000}
        text = await text_of(stack, account, "search_nearby", arguments)
        summary, data = text.split("\n", 1)
        results = json.loads(data)["results"]
        collapsed = [r["code"] for r in results if r.get("positionPrecision") == "city"]
        exact = [r["code"] for r in results if r.get("positionPrecision") is None]
        assert collapsed
        assert exact
        # the codes named with a distance in the first line are all placed exactly
        named = summary.split(": ", 1)[1].split(" and ", 1)[0]
        assert all(code not in named.replace(",", " ").split() for code in collapsed), summary
        # and every exact one comes before every collapsed one
        order = [r["code"] for r in results]
        assert max(order.index(c) for c in exact) < min(order.index(c) for c in collapsed)


class TestWorldMaps:
    async def test_a_zoom_0_map_wider_than_the_world_says_it_is_drawn_once(
        self, stack: Stack, account: Account
    ) -> None:
        arguments = {"zoom": 0, "width": 1024, "height": 512, "center": {"lat": 0, "lon": 0}}
        text = await text_of(stack, account, "static_map", arguments)
        summary, data = text.split("\n", 1)
        assert "see warnings" in summary
        warnings = json.loads(data)["warnings"]
        assert any("drawn once" in w and "zoom 2 fills the width" in w for w in warnings)


class TestYears:
    async def test_a_city_population_without_a_dated_source_says_so(
        self, stack: Stack, account: Account
    ) -> None:
        text = await text_of(stack, account, "get_population", {"area": "Lyon"})
        summary, data = text.split("\n", 1)
        assert "Lyon" in summary
        assert "year not stated" in summary
        assert json.loads(data)["year"] is None
