"""The map app as a host renders it (issue 53, item 4): Debian's chromium opens a minimal
host page that reads ui://geosvc/map.html from a live server, puts it in a sandboxed
iframe under the CSP its `_meta.ui.csp` asks for, speaks the Apps bridge
(ui/initialize, ui/notifications/initialized, tool-input, tool-result) and hands it a
real static_map call's arguments and result. Checked: tiles from our endpoint load (under
that CSP, by the signed URL), the markers, their labels and the path are drawn, and a
choropleth's legend shows, its areas are drawn in the legend's colours from the result's
`_meta`, and a hover (a tap on the phone) over one shows its name and figure. Screenshots
at 1280 and 390 px go to the test's tmp dir (MAP_APP_SHOTS too, when set) for a person to
look at."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, FrameLocator, Page

from app.mcp.map_app import MAP_URI
from tests.dashboard.conftest import browser  # noqa: F401  (the module's chromium)
from tests.mcp.conftest import Account, Stack

SHOTS_DIR = os.environ.get("MAP_APP_SHOTS")
VIEWPORTS = {"desktop": (1280, 800), "phone": (390, 844)}
BAY_AREA = {
    "markers": [
        {"lat": 37.7793, "lon": -122.4193, "label": "San Francisco", "color": "#d62728"},
        {"lat": 37.8044, "lon": -122.2712, "label": "Oakland", "color": "#2ca02c"},
        {"lat": 37.3382, "lon": -121.8863, "label": "San Jose", "color": "#9467bd"},
    ],
    "path": [
        {"lat": 37.7793, "lon": -122.4193},
        {"lat": 37.8044, "lon": -122.2712},
        {"lat": 37.3382, "lon": -121.8863},
    ],
    "path_color": "#1f77b4",
    "path_width": 4,
    "width": 600,
    "height": 400,
}

HOST_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>host</title>
<style>html,body{margin:0;height:100%} iframe{border:0;width:100%;height:100%}</style>
</head><body>
<iframe id="app" sandbox="allow-scripts" title="map"></iframe>
<script>
window.hostLog = [];
window.hostSizes = [];
function start(html, csp, toolArguments, toolResult) {
  const frame = document.getElementById("app");
  const policy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
    "img-src data: blob: " + csp.resourceDomains.join(" ") + "; connect-src " +
    (csp.connectDomains.length ? csp.connectDomains.join(" ") : "'none'");
  const send = message => frame.contentWindow.postMessage({jsonrpc: "2.0", ...message}, "*");
  window.addEventListener("message", event => {
    if (event.source !== frame.contentWindow) return;
    const message = event.data;
    window.hostLog.push(message.method || "(result)");
    if (message.method === "ui/initialize") {
      send({id: message.id, result: {protocolVersion: message.params.protocolVersion,
        hostInfo: {name: "test-host", version: "1"}, hostCapabilities: {},
        hostContext: {theme: "light", displayMode: "inline"}}});
    } else if (message.method === "ui/notifications/initialized") {
      send({method: "ui/notifications/tool-input", params: {arguments: toolArguments}});
      send({method: "ui/notifications/tool-result", params: toolResult});
    } else if (message.method === "ui/notifications/size-changed") {
      window.hostSizes.push(message.params);
    }
  });
  const meta = '<meta http-equiv="Content-Security-Policy" content="' + policy + '">';
  frame.srcdoc = html.replace("<head>", "<head>" + meta);
}
</script></body></html>"""


def rpc(stack: Stack, account: Account, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC call to /mcp over plain HTTP, as a host's MCP client sends it."""
    response = httpx.post(
        stack.mcp_url,
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={
            "Authorization": f"Bearer {account.api_key}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return dict(response.json()["result"])


@pytest.fixture(params=list(VIEWPORTS))
def host(
    request: pytest.FixtureRequest,
    browser: Browser,  # noqa: F811
) -> Iterator[tuple[Page, str]]:
    width, height = VIEWPORTS[request.param]
    context = browser.new_context(
        viewport={"width": width, "height": height}, has_touch=request.param == "phone"
    )
    context.set_default_timeout(20_000)
    try:
        yield context.new_page(), str(request.param)
    finally:
        context.close()


def poll(check: Any, deadline_s: float = 20.0) -> Any:
    deadline = time.monotonic() + deadline_s
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def open_app(
    page: Page, stack: Stack, account: Account, arguments: dict[str, Any], result: dict[str, Any]
) -> FrameLocator:
    """The host page with the app in its iframe, handed the call; once a tile has loaded."""
    [content] = rpc(stack, account, "resources/read", {"uri": MAP_URI})["contents"]
    page.set_content(HOST_PAGE)
    page.evaluate(
        "([html, csp, args, result]) => start(html, csp, args, result)",
        [content["text"], content["_meta"]["ui"]["csp"], arguments, result],
    )
    frame = page.frame_locator("#app")
    frame.locator("img.leaflet-tile-loaded").first.wait_for()
    return frame


def test_map_app_draws_a_static_map_on_our_tiles(
    stack: Stack, account: Account, host: tuple[Page, str], tmp_path: Path
) -> None:
    page, viewport = host
    drawn = rpc(stack, account, "tools/call", {"name": "static_map", "arguments": BAY_AREA})
    assert not drawn.get("isError"), drawn
    [content] = rpc(stack, account, "resources/read", {"uri": MAP_URI})["contents"]
    csp = content["_meta"]["ui"]["csp"]
    page.set_content(HOST_PAGE)
    page.evaluate(
        "([html, csp, args, result]) => start(html, csp, args, result)",
        [content["text"], csp, BAY_AREA, drawn],
    )
    frame = page.frame_locator("#app")
    # Tiles: PNGs from our endpoint, by the signed URL (an <img> sends no key), decoded
    # (an error's JSON would not be) under the CSP. Read from the iframe's DOM: the page's
    # response events miss some requests of a sandboxed iframe.
    # (Leaflet marks a tile "loaded" when it failed too: its naturalWidth tells.)
    pending = frame.locator("img.leaflet-tile:not(.leaflet-tile-loaded)")
    tiles = frame.locator("img.leaflet-tile-loaded")
    tiles.first.wait_for()
    assert poll(lambda: pending.count() == 0), pending.count()
    loaded = tiles.evaluate_all("imgs => imgs.map(i => [i.src, i.naturalWidth])")
    assert len(loaded) >= 6, loaded
    assert all(src.startswith(f"{stack.server.url}/v1/tiles/") for src, _ in loaded), loaded
    assert all("signature=" in src and width == 256 for src, width in loaded), loaded
    # The markers (SVG circles), their labels and the path.
    markers = frame.locator("path.leaflet-interactive:not(.geosvc-path)")
    assert poll(lambda: markers.count() == len(BAY_AREA["markers"])), markers.count()
    labels = frame.locator(".geosvc-label").all_inner_texts()
    assert sorted(labels) == ["Oakland", "San Francisco", "San Jose"]
    path = frame.locator("path.geosvc-path")
    assert path.count() == 1
    assert path.get_attribute("stroke") == "#1f77b4"
    assert (path.bounding_box() or {}).get("width", 0) > 20
    # The bridge, in the order the Apps spec gives.
    log = page.evaluate("window.hostLog")
    assert log[:2] == ["ui/initialize", "ui/notifications/initialized"], log
    assert page.evaluate("window.hostSizes"), "the app reports its size"
    # Everything the call drew is on the app's overlay: three markers and the path.
    assert json.loads(frame.locator("body").get_attribute("data-drawn") or "0") == 4
    for directory in [tmp_path, *([Path(SHOTS_DIR)] if SHOTS_DIR else [])]:
        directory.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(directory / f"map-app-{viewport}.png"))


def test_map_app_shows_the_choropleth_legend(
    stack: Stack, account: Account, host: tuple[Page, str], tmp_path: Path
) -> None:
    """A static_map with a choropleth: the app shows its legend (measure, classes, what is
    hatched, source and year) over our tiles."""
    page, viewport = host
    arguments = {
        "center": {"lat": 38.5, "lon": -96.0},
        "zoom": 4,
        "choropleth": {"measure": "population_density", "level": "state"},
    }
    drawn = rpc(stack, account, "tools/call", {"name": "static_map", "arguments": arguments})
    assert not drawn.get("isError"), drawn
    classes = drawn["structuredContent"]["choropleth"]["classes"]
    frame = open_app(page, stack, account, arguments, drawn)
    legend = frame.locator("#legend")
    legend.wait_for(state="visible")
    text = legend.inner_text()
    assert "Population density (people per km²)" in text
    assert "Census PEP 2019" in text
    swatches = legend.locator(".swatch").evaluate_all(
        "spans => spans.map(s => getComputedStyle(s).backgroundColor)"
    )
    assert len(swatches) >= len(classes) == 5, swatches
    assert (legend.bounding_box() or {}).get("height", 0) > 60
    # The areas, from the result's _meta, in the legend's colours; none in its text.
    outlines = drawn["_meta"]["geosvc/choropleth"]
    assert "rings" not in json.dumps(drawn["structuredContent"])
    assert "rings" not in json.dumps(drawn["content"])
    areas = frame.locator("path.geosvc-area")
    assert poll(lambda: areas.count() > 40), areas.count()
    fills = set(areas.evaluate_all("paths => paths.map(p => p.getAttribute('fill'))"))
    assert fills <= {c["color"] for c in classes} | {"#bdbdbd"}, fills
    assert len(fills & {c["color"] for c in classes}) == len(classes), fills
    # Hover (desktop) or tap (phone) over Kansas: its name, its figure with the unit, the
    # source and year.
    [app] = [f for f in page.frames if f != page.main_frame]
    point = app.evaluate("() => map.latLngToContainerPoint([38.5, -98.5])")
    if viewport == "phone":
        page.touchscreen.tap(point["x"], point["y"])
    else:
        page.mouse.move(point["x"], point["y"])
    hover = frame.locator("#hover")
    hover.wait_for(state="visible")
    kansas = outlines["values"][outlines["names"].index("Kansas")]
    assert hover.inner_text().split("\n") == [
        "Kansas",
        f"{kansas:.1f} people per km²",
        "Census PEP 2019, land area Census 2016",
    ]
    for directory in [tmp_path, *([Path(SHOTS_DIR)] if SHOTS_DIR else [])]:
        directory.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(directory / f"map-app-choropleth-{viewport}.png"))


def test_map_app_marks_geocode_results(
    stack: Stack, account: Account, host: tuple[Page, str]
) -> None:
    """An answer of places (geocode) is drawn from its result: a marker and label each."""
    page, _viewport = host
    arguments = {"query": "Portland", "limit": 3}
    found = rpc(stack, account, "tools/call", {"name": "geocode", "arguments": arguments})
    assert not found.get("isError"), found
    frame = open_app(page, stack, account, arguments, found)
    places = found["structuredContent"]["results"]
    labels = frame.locator(".geosvc-label")
    assert poll(lambda: labels.count() == len(places)), labels.count()
    assert sorted(labels.all_inner_texts()) == sorted(place["label"] for place in places)


def test_map_app_hatches_areas_without_data_and_says_when_outlines_are_left_out(
    stack: Stack, account: Account, host: tuple[Page, str], tmp_path: Path
) -> None:
    """Countries without a density figure are hatched (the legend's "no data"); a result
    whose outlines were over the size cap draws no areas and says why beside the legend."""
    page, viewport = host
    arguments = {
        "center": {"lat": 20.0, "lon": 10.0},
        "zoom": 2,
        "choropleth": {"measure": "population_density", "level": "country"},
    }
    drawn = rpc(stack, account, "tools/call", {"name": "static_map", "arguments": arguments})
    assert not drawn.get("isError"), drawn
    assert drawn["structuredContent"]["choropleth"]["noData"] > 0
    frame = open_app(page, stack, account, arguments, drawn)
    hatched = frame.locator("path.geosvc-area.geosvc-nodata")
    assert poll(lambda: hatched.count() > 0), hatched.count()
    fill = hatched.first.evaluate("p => getComputedStyle(p).fill")
    assert "geosvc-hatch" in fill, fill
    for directory in [tmp_path, *([Path(SHOTS_DIR)] if SHOTS_DIR else [])]:
        directory.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(directory / f"map-app-no-data-{viewport}.png"))
    # the payload outlines.build gives over its cap
    omitted = "the 201 countries in view need 400 KB of outlines, over the app's 300 KB"
    over = {**drawn, "_meta": {**drawn["_meta"], "geosvc/choropleth": {"omitted": omitted}}}
    frame = open_app(page, stack, account, arguments, over)
    legend = frame.locator("#legend")
    legend.wait_for(state="visible")
    assert f"Areas not drawn here: {omitted}." in legend.inner_text()
    assert frame.locator("path.geosvc-area").count() == 0
