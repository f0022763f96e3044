"""What an agent reads of a geocode that matched only part of its query (issue 52, item 4):
the text block alone (Claude Desktop shows its model nothing else) says which words were
ignored and what was matched instead, so the city's centre is never taken for the
landmark."""

from __future__ import annotations

import json

from tests.mcp.conftest import Account, Stack, connect


async def text_of(stack: Stack, account: Account, query: str) -> str:
    async with connect(stack.mcp_url, account.api_key) as client:
        result = await client.call_tool("geocode", {"query": query})
    assert not result.is_error, result.content
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


class TestTextBlockOnly:
    async def test_a_landmark_with_its_city_reads_as_the_city_only(
        self, stack: Stack, account: Account
    ) -> None:
        text = await text_of(stack, account, "Space Needle, Seattle")
        summary, data = text.split("\n", 1)
        assert summary.startswith("'Space Needle, Seattle': Seattle, Washington, US")
        assert "'Space Needle' matched no place in the embedded data" in summary
        warnings = json.loads(data)["warnings"]
        assert any("upstream geocoder" in w and "only 'Seattle'" in w for w in warnings)

    async def test_a_typo_reads_as_the_place_it_was_taken_for(
        self, stack: Stack, account: Account
    ) -> None:
        text = await text_of(stack, account, "Philadelpia, PA")
        summary = text.split("\n", 1)[0]
        assert summary.startswith("'Philadelpia, PA': Philadelphia, Pennsylvania, US")
        assert "read as 'Philadelphia'" in summary
