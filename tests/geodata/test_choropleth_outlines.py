"""The choropleth's outlines for the map app (app.geodata.tools.static_map.outlines), on the
real indices: every area in the legend's count, classed with the legend's colours, rings
that decode (written out again here) to where the area is, ZIP codes as points, within the
size cap, and over it left out with the reason."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from app.geodata.loading import provider
from app.geodata.service import execute
from app.geodata.tools.static_map import choropleth, embedded, outlines
from app.geodata.tools.static_map.schemas import StaticMapArgs

US = {"center": {"lat": 38.5, "lon": -96.0}, "zoom": 4, "width": 800, "height": 500}
STATES = {**US, "choropleth": {"measure": "population_density", "level": "state"}}


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def decode_ring(text: str) -> list[tuple[int, int]]:
    """Google's encoded polyline algorithm, read back: x then y, deltas from 0."""
    numbers, value, shift = [], 0, 0
    for char in text:
        byte = ord(char) - 63
        value |= (byte & 31) << shift
        shift += 5
        if byte < 32:
            numbers.append(~(value >> 1) if value & 1 else value >> 1)
            value, shift = 0, 0
    x = y = 0
    points = []
    for dx, dy in zip(numbers[::2], numbers[1::2], strict=True):
        x, y = x + dx, y + dy
        points.append((x, y))
    return points


def lonlat(point: tuple[int, int], zoom: int) -> tuple[float, float]:
    scale = 256 * 2**zoom
    x, y = point[0] / scale, point[1] / scale
    return x * 360 - 180, math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * y))))


def outlines_of(arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    call = execute("static_map", arguments)
    assert call.app_meta is not None
    return call.structured, call.app_meta[outlines.OUTLINES_META]


class TestStates:
    def test_each_area_of_the_legend_with_its_class_figure_and_rings(self) -> None:
        result, payload = outlines_of(STATES)
        legend = result["choropleth"]
        assert (payload["measure"], payload["unit"], payload["year"]) == (
            "population_density",
            "per_km2",
            "2019",
        )
        assert payload["credit"] == legend["credit"]
        assert f"{len(payload['names'])} states" == legend["areas"]
        classes = payload["classes"]
        for c, entry in enumerate(legend["classes"]):
            assert classes.count(c) == entry["areas"]
        assert classes.count(None) == legend["noData"]
        kansas = payload["names"].index("Kansas")
        low, high = (
            legend["classes"][classes[kansas]]["min"],
            legend["classes"][classes[kansas]]["max"],
        )
        assert low <= payload["values"][kansas] <= high
        points = [
            lonlat(p, payload["zoom"]) for r in payload["rings"][kansas] for p in decode_ring(r)
        ]
        lons, lats = [p[0] for p in points], [p[1] for p in points]
        # Kansas: 102.05W to 94.59W, 36.99N to 40.00N (a pixel of zoom 5 is ~0.04 degrees)
        assert -102.2 < min(lons) < -101.9, min(lons)
        assert -94.8 < max(lons) < -94.4, max(lons)
        assert 36.8 < min(lats) < 37.1, min(lats)
        assert 39.9 < max(lats) < 40.2, max(lats)
        assert payload["bytes"] == len(
            json.dumps(
                {k: v for k, v in payload.items() if k != "bytes"},
                separators=(",", ":"),
                ensure_ascii=False,
            ).encode()
        )

    def test_not_in_the_json_a_model_or_a_rest_client_reads(self) -> None:
        result, payload = outlines_of(STATES)
        assert payload["rings"]
        assert "rings" not in json.dumps(result)


class TestSizes:
    def test_all_us_counties_at_zoom_4_fit_the_cap(self) -> None:
        _result, payload = outlines_of(
            {**US, "choropleth": {"measure": "population", "level": "county"}}
        )
        assert len(payload["names"]) > 3000
        assert 0 < payload["bytes"] <= outlines.MAX_BYTES

    def test_over_the_cap_left_out_with_the_reason(self) -> None:
        args = StaticMapArgs.model_validate(STATES)
        view = embedded.map_view(provider(), args)
        assert args.choropleth is not None
        built = choropleth.layer(provider().data, view, args.choropleth)
        payload = outlines.build(view, built, max_bytes=2000)
        assert "rings" not in payload
        assert payload["omitted"].startswith("the 49 states in view need 6 KB of outlines")
        assert "over the app's 2 KB" in payload["omitted"]

    def test_zip_codes_are_points(self) -> None:
        _result, payload = outlines_of(
            {
                "center": {"lat": 30.3, "lon": -97.75},
                "zoom": 10,
                "choropleth": {"measure": "median_household_income", "level": "zip"},
            }
        )
        assert "rings" not in payload
        assert len(payload["points"]) == len(payload["names"]) > 20
        lon, lat = lonlat(tuple(payload["points"][0]), payload["zoom"])
        assert -98.5 < lon < -97.0
        assert 29.8 < lat < 30.8
