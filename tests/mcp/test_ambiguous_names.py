"""geocode says when a name is ambiguous, to the official client in both protocol
generations: as data (`ambiguous`, `candidates`) valid against the tool's output schema,
and in the text summary. Asking the person (elicitation, or the 2026-07-28 input-required
result) is not done: see docs/DESIGN.md, "Ambiguous place names"."""

from __future__ import annotations

import jsonschema
import pytest

from tests.mcp.conftest import Account, Stack, connect, structured


@pytest.mark.parametrize("mode", ["legacy", "auto"])
class TestAmbiguousGeocode:
    async def test_springfield_comes_with_its_candidates(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            result = await client.call_tool("geocode", {"query": "Springfield", "limit": 1})

        assert not result.is_error
        data = structured(result)
        jsonschema.validate(data, tools["geocode"].output_schema)
        assert data["ambiguous"] is True
        assert len(data["results"]) == 1  # the candidates reach past the limit
        assert [(c["countryCode"], c["admin1"]) for c in data["candidates"][:3]] == [
            ("US", "Missouri"),
            ("US", "Massachusetts"),
            ("US", "Illinois"),
        ]
        for candidate in data["candidates"]:
            assert {"name", "admin1", "countryCode", "lat", "lon", "confidence"} <= set(candidate)
        text = result.content[0].text  # type: ignore[union-attr]
        assert "Ambiguous: it also names Springfield, Massachusetts, US (" in text
        assert "Ask which one is meant." in text

    async def test_austin_tx_is_not_flagged(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            result = await client.call_tool("geocode", {"query": "Austin, TX"})

        data = structured(result)
        assert (data["ambiguous"], data["candidates"]) == (False, [])
        assert "Ambiguous" not in result.content[0].text  # type: ignore[union-attr]
