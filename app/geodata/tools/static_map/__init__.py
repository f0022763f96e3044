"""static_map: a PNG map drawn from the embedded basemap."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from app.geodata.tools.common import CREDIT
from app.geodata.tools.spec import Example, ToolSpec
from app.geodata.tools.static_map.schemas import MAX_MAP_ZOOM, StaticMapArgs, StaticMapResult
from app.kit.config import Settings


def weight(arguments: Mapping[str, Any], settings: Settings) -> int:
    """One rate token per `heavy_map_pixels` (600x400 by default): a 1280x1280 map takes 7
    (app.tool_calls.routing)."""
    pixels = int(arguments["width"]) * int(arguments["height"])
    return max(1, math.ceil(pixels / settings.heavy_map_pixels))


def summary(result: dict[str, Any]) -> str:
    center = result["center"]
    return (
        f"{result['width']}x{result['height']} PNG map of ({center['lat']:.4f}, "
        f"{center['lon']:.4f}) at zoom {result['zoom']} with {result['markers']} marker(s)"
        + (" (see warnings)." if result.get("warnings") else ".")
    )


EXAMPLE = Example(
    {
        "center": "40.71,-74.0",
        "zoom": 10,
        "markers": ["40.71,-74.0,red,Office"],
        "width": 320,
        "height": 200,
    },
    {
        "width": 320,
        "height": 200,
        "center": {"lat": 40.71, "lon": -74.0},
        "zoom": 10,
        "bbox": {"west": -74.2197, "south": 40.6058, "east": -73.7803, "north": 40.8140},
        "markers": 1,
        "warnings": [],
        "format": "image/png",
        "bytes": 9201,
        "attribution": "GeoNames CC BY 4.0 | Natural Earth | US Census TIGER | GSHHG LGPL",
        "source": "GeoNames CC BY 4.0 | Natural Earth | US Census TIGER | GSHHG LGPL",
        "dataset": "basemap@v7-89dedc34",
        "pngBase64": "iVBORw0KGgoAAAANSUhEUgAAAUAAAADICAIAAAAW...",
    },
    mcp_arguments={
        "center": {"lat": 40.71, "lon": -74.0},
        "zoom": 10,
        "markers": [{"lat": 40.71, "lon": -74.0, "label": "Office"}],
        "width": 320,
        "height": 200,
    },
)

SPEC = ToolSpec(
    "static_map",
    "Draw a map",
    "A PNG map (Web Mercator): borders, place labels (no streets), markers, a path, "
    f"a choropleth. Give `center` and `zoom` (0 world - {MAX_MAP_ZOOM} town), or "
    "`markers`, `path`, `bbox` to fit." + CREDIT,
    StaticMapArgs,
    StaticMapResult,
    __name__,
    summary,
    "/v1/static-map",
    EXAMPLE,
    coverage=(
        "country and US state borders and place labels, zoom 0-12; choropleths of countries, "
        "US states and counties (population, density), ZIP codes (also income, demographics)",
        "none: maps are always drawn from the embedded basemap",
    ),
    upstream_capable=False,
    cacheable=False,
    weight=weight,
    answers_places=True,
)
