"""The coast on static_map at zooms 11-12, read from its pixels: GSHHG's full-resolution
shoreline (from zoom 9 on) where Natural Earth's 1:10m coast drew harbours and fjords as
land and islands and peninsulas as sea; the countries' borders drawn as lines on land,
never along the coast nor out over the water.

Each point is inside GSHHG 2.3.6's full shoreline by at least 150 m (5 px at zoom 12),
and on the other side of Natural Earth's 1:10m coast (which the maps drew before); the
test reads a 5x5 block of pixels around it, the map drawn without place names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from app.geodata.providers.embedded import EmbeddedProvider
from app.geodata.rendering.map_image import COUNTRY_BORDER, LAND, OCEAN
from app.geodata.service import provider
from tests.geodata.test_static_map import mercator_pixel
from tests.geodata.test_static_map_water import draw_unlabelled


@pytest.fixture(scope="module")
def embedded(geodata_dir: Path) -> EmbeddedProvider:
    return provider()


def block(embedded: EmbeddedProvider, lat: float, lon: float, zoom: int) -> npt.NDArray[Any]:
    """The 5x5 pixels around (lat, lon) on a 300x200 map centred near it."""
    args = {"center": {"lat": lat + 0.002, "lon": lon - 0.003}, "zoom": zoom}
    result, image = draw_unlabelled(embedded, {**args, "width": 300, "height": 200})
    x, y = mercator_pixel(result, lat, lon)
    return image[y - 2 : y + 3, x - 2 : x + 3]


def all_of(pixels: npt.NDArray[Any], colour: tuple[int, int, int]) -> bool:
    return bool(np.all(pixels == colour))


# (what, (lat, lon), zoom): water the 1:10m coast drew as land
WATER = [
    ("Cape Town's harbour, Duncan Dock", (-33.905, 18.435), 12),
    ("the Oslofjord off Drøbak", (59.66, 10.62), 11),
    ("the Venice lagoon behind the Lido", (45.37, 12.33), 12),
    ("the Golden Horn, Istanbul", (41.025, 28.96), 12),
]
# land the 1:10m coast drew as sea
LAND_POINTS = [
    ("Bygdøy peninsula, Oslo", (59.905, 10.683), 12),
    ("Treasure Island, San Francisco Bay", (37.823, -122.371), 12),
    ("Angel Island, San Francisco Bay", (37.86, -122.43), 11),
    ("Robben Island, Table Bay", (-33.806, 18.366), 11),
]
# both coasts agree: land stays land, the sea stays sea
STAYS = [
    ("Venice, the historic centre", (45.437, 12.335), 12, LAND),
    ("Hunters Point, San Francisco", (37.727, -122.368), 12, LAND),
    ("Nesodden, Oslofjord", (59.84, 10.66), 11, LAND),
    ("Fiumicino, Rome's coast", (41.77, 12.22), 12, LAND),
    ("Bunnefjorden, Oslo", (59.82, 10.73), 12, OCEAN),
    ("San Francisco Bay by the Bay Bridge", (37.80, -122.36), 12, OCEAN),
    ("the Tyrrhenian Sea off Ostia", (41.70, 12.22), 11, OCEAN),
]


@pytest.mark.parametrize(("what", "point", "zoom"), WATER, ids=[w for w, _p, _z in WATER])
def test_water_the_coarse_coast_drew_as_land_is_water(
    embedded: EmbeddedProvider, what: str, point: tuple[float, float], zoom: int
) -> None:
    assert all_of(block(embedded, *point, zoom), OCEAN), what


@pytest.mark.parametrize(
    ("what", "point", "zoom"), LAND_POINTS, ids=[w for w, _p, _z in LAND_POINTS]
)
def test_land_the_coarse_coast_drew_as_sea_is_land(
    embedded: EmbeddedProvider, what: str, point: tuple[float, float], zoom: int
) -> None:
    assert all_of(block(embedded, *point, zoom), LAND), what


@pytest.mark.parametrize(
    ("what", "point", "zoom", "colour"), STAYS, ids=[w for w, _p, _z, _c in STAYS]
)
def test_where_both_coasts_agree_nothing_changes(
    embedded: EmbeddedProvider,
    what: str,
    point: tuple[float, float],
    zoom: int,
    colour: tuple[int, int, int],
) -> None:
    assert all_of(block(embedded, *point, zoom), colour), what


def border_pixels(image: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    return np.all(image == COUNTRY_BORDER, axis=2)


@pytest.mark.parametrize("zoom", [9, 11, 12])
def test_the_coast_is_not_drawn_as_a_border(embedded: EmbeddedProvider, zoom: int) -> None:
    """Cape Town has no land border in view: no pixel in the border's colour (up to zoom
    8 a country's outline, coast included, is its border; from 9 only shared edges are)."""
    args = {"center": {"lat": -33.92, "lon": 18.42}, "zoom": zoom}
    _result, image = draw_unlabelled(embedded, args)
    assert not border_pixels(image[:-16]).any()


# Land borders that reach the sea: Spain-Portugal at the Minho, France-Spain at the
# Bidasoa, Germany-Denmark on the Flensburg Fjord, the US-Canada line at Blaine
BORDER_COASTS = [
    ("Minho", (41.95, -8.75)),
    ("Bidasoa", (43.37, -1.78)),
    ("Flensburg Fjord", (54.83, 9.40)),
    ("Blaine", (49.0, -122.76)),
]


@pytest.mark.parametrize(("what", "point"), BORDER_COASTS, ids=[w for w, _p in BORDER_COASTS])
@pytest.mark.parametrize("zoom", [10, 12])
def test_a_border_is_drawn_on_land_and_stops_at_the_coast(
    embedded: EmbeddedProvider, what: str, point: tuple[float, float], zoom: int
) -> None:
    """The border is drawn, and each of its pixels touches land (within 1 px): clipped to
    GSHHG's land, it never runs out over the water."""
    lat, lon = point
    args = {"center": {"lat": lat, "lon": lon}, "zoom": zoom, "width": 600, "height": 400}
    _result, image = draw_unlabelled(embedded, args)
    image = image[:-16]  # the attribution
    border = border_pixels(image)
    assert border.sum() > 20, what
    land = np.all(image == LAND, axis=2)
    near_land = np.zeros_like(land)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            near_land |= np.roll(np.roll(land, dy, axis=0), dx, axis=1)
    ys, xs = np.nonzero(border & ~near_land)
    assert len(ys) == 0, (what, list(zip(xs.tolist(), ys.tolist(), strict=True))[:10])
