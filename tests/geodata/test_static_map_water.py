"""Water on static_map, read from its pixels: lakes in the ocean's colour at every zoom
where they show (Natural Earth 1:10m lakes), their islands and the land around them in
the land's, and major rivers (GSHHG WDBII) as lines in the ocean's colour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from app.geodata.catalogue import parse
from app.geodata.providers.embedded import EmbeddedProvider, attribution
from app.geodata.rendering.map_image import LAND, OCEAN, render
from app.geodata.service import execute, provider
from app.geodata.tools.static_map.embedded import map_view
from app.geodata.tools.static_map.schemas import StaticMapArgs
from tests.geodata.test_static_map import mercator_pixel
from tests.geodata.test_static_map_pixels import pixels


def draw(request_args: dict[str, Any]) -> tuple[dict[str, Any], npt.NDArray[np.uint8]]:
    call = execute("static_map", request_args)
    assert call.png is not None
    return call.structured, pixels(call.png)


@pytest.fixture(scope="module")
def embedded(geodata_dir: Path) -> EmbeddedProvider:
    return provider()


def draw_unlabelled(
    embedded: EmbeddedProvider, request_args: dict[str, Any]
) -> tuple[dict[str, Any], npt.NDArray[np.uint8]]:
    """The map without place names (whose halos are near-white): the basemap alone."""
    args = parse("static_map", request_args)
    assert isinstance(args, StaticMapArgs)
    view = map_view(embedded, args)
    png = render(embedded.basemap, view, [], None, attribution.MAP_ATTRIBUTION)
    lon, lat = view.center_lonlat()
    where = {"zoom": view.zoom, "width": view.width, "height": view.height}
    return {"center": {"lat": lat, "lon": lon}, **where}, pixels(png)


def colour_at(request_args: dict[str, Any], lat: float, lon: float) -> tuple[int, ...]:
    result, image = draw(request_args)
    x, y = mercator_pixel(result, lat, lon)
    return tuple(int(c) for c in image[y, x])


# (name, lake point, zooms at which it is drawn)
LAKES = [
    ("Lake Michigan", (43.5, -87.0), (3, 5, 7, 10)),
    ("Lake Superior", (47.7, -87.5), (3, 6, 9)),
    ("IJsselmeer", (52.8, 5.35), (7, 9)),
    ("Lake Geneva", (46.45, 6.55), (8, 10, 12)),
    ("Lake Victoria", (-1.0, 33.0), (4, 6, 8)),
    ("Great Salt Lake", (41.15, -112.6), (7, 9)),
    ("Lake Titicaca", (-15.8, -69.4), (7, 9)),
]


@pytest.mark.parametrize(("name", "point", "zooms"), LAKES, ids=[n for n, _p, _z in LAKES])
def test_a_lake_is_drawn_in_the_oceans_colour(
    geodata_dir: Path, name: str, point: tuple[float, float], zooms: tuple[int, ...]
) -> None:
    lat, lon = point
    for zoom in zooms:
        args = {"center": {"lat": lat, "lon": lon}, "zoom": zoom, "width": 300, "height": 200}
        assert colour_at(args, lat, lon) == OCEAN, (name, zoom)


@pytest.mark.parametrize(
    ("name", "point", "zoom"),
    [
        ("Chicago, inland", (41.85, -87.75), 10),
        ("Geneva's left bank, Cologny hills", (46.22, 6.20), 10),
        ("Isle Royale, in Lake Superior", (48.0, -88.9), 9),
        ("Manitoulin Island, in Lake Huron", (45.75, -82.2), 8),
    ],
)
def test_land_by_a_lake_and_islands_in_it_stay_land(
    geodata_dir: Path, name: str, point: tuple[float, float], zoom: int
) -> None:
    lat, lon = point
    args = {"center": {"lat": lat, "lon": lon}, "zoom": zoom, "width": 300, "height": 200}
    assert colour_at(args, lat, lon) == LAND, name


def test_lake_michigan_has_no_border_across_it(embedded: EmbeddedProvider) -> None:
    """TIGER's state lines run through the lake (Illinois, Wisconsin, Michigan, Indiana):
    the lake is drawn over them, so a line across the lake meets only water."""
    result, image = draw_unlabelled(embedded, {"center": {"lat": 43.5, "lon": -87.0}, "zoom": 7})
    for lon in np.linspace(-87.6, -86.6, 30).tolist():
        x, y = mercator_pixel(result, 42.3, lon)
        assert tuple(int(c) for c in image[y, x]) == OCEAN, lon


@pytest.mark.parametrize(
    ("name", "points", "zoom"),
    [
        # the Mississippi at St. Louis, the Rhine at Cologne, the Danube at Budapest
        ("Mississippi", ((38.2, -91.0), (39.2, -89.8)), 8),
        ("Rhine", ((50.75, 6.8), (51.15, 7.2)), 9),
        ("Danube", ((47.3, 18.8), (47.8, 19.2)), 9),
    ],
)
def test_a_major_river_crosses_its_valley_in_water(
    embedded: EmbeddedProvider, name: str, points: tuple[tuple[float, float], ...], zoom: int
) -> None:
    """Every row of the valley's box has a water pixel where the river flows through it."""
    (south, west), (north, east) = points
    centre = {"lat": (south + north) / 2, "lon": (west + east) / 2}
    args = {"center": centre, "zoom": zoom, "width": 600, "height": 400}
    result, image = draw_unlabelled(embedded, args)
    x0, y1 = mercator_pixel(result, south, west)
    x1, y0 = mercator_pixel(result, north, east)
    box = image[y0:y1, x0:x1]
    water = np.all(box == OCEAN, axis=2)
    assert water.any(axis=1).mean() > 0.9, name
    assert water.mean() < 0.2, name  # a river, not the valley flooded


def test_no_rivers_on_a_world_map(embedded: EmbeddedProvider) -> None:
    """The Amazon's basin at zoom 2 stays land: world maps draw no rivers."""
    args = {"center": {"lat": 0.0, "lon": 0.0}, "zoom": 2, "width": 1280, "height": 1280}
    result, image = draw_unlabelled(embedded, args)
    x0, y1 = mercator_pixel(result, -8.0, -70.0)
    x1, y0 = mercator_pixel(result, -2.0, -55.0)
    assert not np.all(image[y0:y1, x0:x1] == OCEAN, axis=2).any()
