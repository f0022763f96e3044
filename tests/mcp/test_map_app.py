"""The interactive map as an MCP App (issue 53, item 2), through the official client on
both protocol generations: the tools that answer places name the app's resource, the
resource is listed and read as an Apps document with Leaflet inlined and a CSP naming only
our tile origin, the extension is advertised, and each such result carries the signed
tile URL template the page needs."""

from __future__ import annotations

import re

import pytest

from app.mcp.map_app import EXTENSION_ID, MAP_URI, MIME_TYPE
from tests.mcp.conftest import Account, Stack, connect

APP_TOOLS = {"static_map", "geocode", "reverse_geocode", "search_nearby"}
MODES = ["auto", "legacy"]  # 2026-07-28 (server/discover) and 2025-11-25 (initialize)


@pytest.mark.parametrize("mode", MODES)
class TestAdvertised:
    async def test_place_tools_name_the_app(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            tools = (await client.list_tools()).tools
        with_app = {tool.name for tool in tools if (tool.meta or {}).get("ui")}
        assert with_app == APP_TOOLS
        for tool in tools:
            if tool.name in APP_TOOLS:
                assert tool.meta == {"ui": {"resourceUri": MAP_URI}}

    async def test_extension_in_capabilities(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        """server/discover names the extension; the SDK (2.3.0) leaves `extensions` out of
        a 2025-11-25 initialize result, where hosts go by the tools' `_meta.ui` alone."""
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            extensions = client.server_capabilities.extensions or {}
            assert client.server_capabilities.resources is not None
        if mode == "auto":
            assert extensions[EXTENSION_ID] == {"mimeTypes": [MIME_TYPE]}

    async def test_resource_is_listed_and_read(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            listed = (await client.list_resources()).resources
            read = await client.read_resource(MAP_URI)
        assert [(str(r.uri), r.mime_type) for r in listed] == [(MAP_URI, MIME_TYPE)]
        [content] = read.contents
        assert content.mime_type == MIME_TYPE
        html = content.text  # type: ignore[union-attr]
        assert html.startswith("<!DOCTYPE html>")
        assert "L.tileLayer" in html
        assert "Leaflet 1.9.4" in html
        assert not re.search(r"<script[^>]+src=", html)  # nothing from elsewhere
        assert not re.search(r"<link[^>]+href=", html)
        assert content.meta is not None
        csp = content.meta["ui"]["csp"]
        assert csp["resourceDomains"] == [stack.server.url]
        assert csp["connectDomains"] == []


class TestResultMeta:
    @pytest.mark.parametrize("mode", MODES)
    async def test_place_answers_carry_a_tile_grant(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            placed = await client.call_tool("reverse_geocode", {"lat": 48.8566, "lon": 2.3522})
            counted = await client.call_tool("get_population", {"postal_code": "94103"})
        assert not placed.is_error
        assert not counted.is_error
        grant = placed.meta["geosvc/tiles"]
        assert grant["urlTemplate"].startswith(
            f"{stack.server.url}/v1/tiles/{{z}}/{{x}}/{{y}}.png?"
        )
        assert f"account={account.user_id}" in grant["urlTemplate"]
        assert "GeoNames" in grant["attribution"]
        assert "geosvc/usage" in placed.meta
        assert "geosvc/tiles" not in counted.meta  # no map for a figure

    async def test_unknown_resource_is_an_error(self, stack: Stack, account: Account) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            with pytest.raises(Exception, match="No resource"):
                await client.read_resource("ui://geosvc/other.html")
