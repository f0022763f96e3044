"""Ring studies over MCP (issue 54), as an agent reads them: the text block alone of a
circle's answer says how it was estimated and how far off it may be."""

from __future__ import annotations

import re

from tests.mcp.conftest import Account, Stack, connect, structured


class TestRingsOverMcp:
    async def test_the_text_block_carries_the_method_and_its_uncertainty(
        self, stack: Stack, account: Account
    ) -> None:
        around = {"lat": 35.92, "lon": 14.40, "radius_m": 25_000}
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("get_population", {"around": around})

        assert not result.is_error
        text = result.content[0].text  # what a host may show the model, alone
        assert "population about" in text
        assert "Method: populated_places" in text
        assert "NOT counted" in text  # people outside places of 500+
        assert re.search(r"off by [0-9.]+% \(median\), up to [0-9.]+% \(9 in 10\)", text), text

    async def test_income_around_a_point_is_answered_offline_whatever_the_policy(
        self, stack: Stack, account: Account
    ) -> None:
        # this stack sends get_average_income upstream; a circle is estimated offline
        around = {"lat": 39.7392, "lon": -104.9903, "radius_m": 5_000}
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("get_average_income", {"around": around})

        answer = structured(result)
        assert answer["measure"] == "household_weighted_mean_of_zip_medians"
        assert "Not a median" in result.content[0].text

    async def test_arounds_is_a_batch_of_circles(self, stack: Stack, account: Account) -> None:
        arounds = [
            {"lat": 35.92, "lon": 14.40, "radius_m": 25_000},
            {"lat": 30.0, "lon": -40.0, "radius_m": -1},
        ]
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("get_population", {"arounds": arounds})

        answer = structured(result)
        assert answer["results"][0]["result"]["population"] > 400_000
        assert answer["results"][1]["error"]["code"] == "INVALID_ARGUMENT"
        assert answer["credits"] == 1

    async def test_arounds_on_get_demographics(self, stack: Stack, account: Account) -> None:
        arounds = [
            {"lat": 39.7392, "lon": -104.9903, "radius_m": 5_000},
            {"lat": 35.92, "lon": 14.40, "radius_m": 25_000},  # Malta: profiles are US only
        ]
        async with connect(stack.mcp_url, account.api_key) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            result = await client.call_tool(
                "get_demographics", {"arounds": arounds, "topics": ["age"]}
            )

        assert "arounds" in listed["get_demographics"].input_schema["properties"]
        answer = structured(result)
        names = [m["name"] for m in answer["results"][0]["result"]["measures"]]
        assert names[0] == "weighted_mean_of_zip_median_age"
        assert answer["results"][1]["error"]["code"] == "UNSUPPORTED"
        assert answer["credits"] == 1

    async def test_within_a_polygon_states_method_and_error(
        self, stack: Stack, account: Account
    ) -> None:
        polygon = [[-105.05, 39.7], [-104.95, 39.7], [-104.95, 39.8], [-105.05, 39.8]]
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("get_population", {"within": {"polygon": polygon}})
            crossing = await client.call_tool(
                "get_population", {"within": {"polygon": [polygon[0], polygon[2], *polygon[1::2]]}}
            )

        answer = structured(result)
        assert (answer["level"], answer["method"]) == ("shape", "zcta_area_share")
        text = result.content[0].text
        assert "Method: zcta_area_share" in text
        widest = r"up to [0-9.]+% \(9 in 10\) and up to [0-9.]+% \(19 in 20\)"
        assert re.search(r"off by [0-9.]+% \(median\), " + widest, text), text
        assert crossing.is_error
        assert "polygon crosses itself" in crossing.content[0].text
