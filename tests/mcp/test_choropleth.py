"""static_map's choropleth over /mcp (the official client) and /v1 (its compact query
form): the map and its legend for a credit, the map app's outlines in MCP's `_meta` only;
an unknown measure, a measure the level does not hold and a ZIP level over too wide a view
refused in the envelope, free."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import httpx
from PIL import Image

from tests.mcp.conftest import Account, Stack, connect, structured

STATES = {
    "center": {"lat": 38.5, "lon": -96.0},
    "zoom": 4,
    "width": 640,
    "height": 400,
    "choropleth": {"measure": "population", "level": "state"},
}


def used(account: Account) -> int:
    return int(account.http.get("/usage").json()["used"])


async def test_mcp_choropleth_and_its_refusals(stack: Stack, account: Account) -> None:
    async with connect(stack.mcp_url, account.api_key) as client:
        drawn = await client.call_tool("static_map", STATES)
        refused: dict[str, Any] = {}
        for name, choropleth, zoom in (
            ("unknown", {"measure": "gdp_per_capita", "level": "state"}, 4),
            ("not at level", {"measure": "median_household_income", "level": "county"}, 4),
            ("zip too wide", {"measure": "population", "level": "zip"}, 6),
            ("bad level", {"measure": "population", "level": "city"}, 4),
        ):
            refused[name] = await client.call_tool(
                "static_map", {**STATES, "zoom": zoom, "choropleth": choropleth}
            )
    assert not drawn.is_error, drawn.content
    legend = structured(drawn)["choropleth"]
    assert legend["title"] == "Population (people)"
    assert legend["year"] == "2019"
    assert len(legend["classes"]) == 5
    # the areas for the map app: in _meta only, one per area the legend counts
    outlines = (drawn.meta or {})["geosvc/choropleth"]
    assert f"{len(outlines['names'])} states" == legend["areas"]
    assert len(outlines["rings"]) == len(outlines["names"])
    assert "rings" not in json.dumps(structured(drawn))
    assert all("rings" not in block.text for block in drawn.content if block.type == "text")
    [image] = [block for block in drawn.content if block.type == "image"]
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (640, 400)
    codes = {name: structured(result)["error"]["code"] for name, result in refused.items()}
    assert codes == {
        "unknown": "INVALID_ARGUMENT",
        "not at level": "UNSUPPORTED",
        "zip too wide": "UNSUPPORTED",
        "bad level": "INVALID_ARGUMENT",
    }
    assert "zoom 8 or more" in structured(refused["zip too wide"])["error"]["message"]
    assert used(account) == 1  # the refusals cost nothing


def test_v1_choropleth_in_its_compact_form(stack: Stack, account: Account) -> None:
    base = f"{stack.server.url}/v1/static-map"
    headers = {"Authorization": f"Bearer {account.api_key}", "Accept": "application/json"}
    query = {"center": "38.5,-96", "zoom": "4", "choropleth": "population_density,state"}
    answer = httpx.get(base, params=query, headers=headers, timeout=60)
    assert answer.status_code == 200, answer.text
    legend = answer.json()["choropleth"]
    assert legend["measure"] == "population_density"
    assert legend["unit"] == "per_km2"
    assert "rings" not in answer.text  # the app's outlines are MCP's `_meta` only
    malformed = httpx.get(
        base, params={**query, "choropleth": "population"}, headers=headers, timeout=60
    )
    assert malformed.status_code == 400
    assert "MEASURE,LEVEL" in malformed.json()["error"]["message"]
    unsupported = httpx.get(
        base,
        params={**query, "choropleth": "share_white,county"},
        headers=headers,
        timeout=60,
    )
    assert unsupported.status_code == 422
    assert unsupported.json()["error"]["code"] == "UNSUPPORTED"
    assert used(account) == 1
