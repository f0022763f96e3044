"""Wide rivers as water areas on static_map (issue 52): GSHHG closes the Hudson at
Manhattan's tip, so at zooms 9-12 the river north of Weehawken was land; Natural Earth's
1:10m ocean goes up it, and the parts of that ocean deep inside GSHHG's land are drawn as
water (indices/estuaries.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.geodata.indices.estuaries import estuary_polygons
from app.geodata.providers.embedded import EmbeddedProvider
from app.geodata.rendering.map_image import LAND, OCEAN
from app.geodata.service import provider
from tests.geodata.test_static_map import mercator_pixel
from tests.geodata.test_static_map_water import draw_unlabelled


@pytest.fixture(scope="module")
def embedded(geodata_dir: Path) -> EmbeddedProvider:
    return provider()


# A row across the Hudson at 40.80 N (West 100th Street): North Bergen's cliffs, the river
# (about 1.2 km wide), Morningside Heights
ROW_LAT, NEW_JERSEY_LON, MID_RIVER_LON, MANHATTAN_LON = 40.80, -74.010, -73.982, -73.955


@pytest.mark.parametrize("zoom", [10, 11, 12])
def test_the_hudson_north_of_weehawken_is_water_between_land(
    embedded: EmbeddedProvider, zoom: int
) -> None:
    args = {"center": {"lat": ROW_LAT, "lon": -73.975}, "zoom": zoom, "width": 600, "height": 400}
    result, image = draw_unlabelled(embedded, args)

    def colour(lon: float) -> tuple[int, ...]:
        x, y = mercator_pixel(result, ROW_LAT, lon)
        return tuple(int(c) for c in image[y, x])

    assert colour(NEW_JERSEY_LON) == LAND
    assert colour(MANHATTAN_LON) == LAND
    assert colour(MID_RIVER_LON) == OCEAN
    x0, y = mercator_pixel(result, ROW_LAT, NEW_JERSEY_LON)
    x1, _y = mercator_pixel(result, ROW_LAT, MANHATTAN_LON)
    water = np.all(image[y, x0:x1] == OCEAN, axis=1).astype(np.int8)
    # the longest run of water pixels across the row: the river, bank to bank
    edges = np.flatnonzero(np.diff(np.concatenate([[0], water, [0]])))
    longest = int(np.max(edges[1::2] - edges[0::2]))
    km_per_px = 40075.016686 * np.cos(np.radians(ROW_LAT)) / (256 * 2**zoom)
    assert 0.9 <= longest * km_per_px <= 2.0, longest * km_per_px


def test_the_river_is_water_up_to_the_tappan_zee(embedded: EmbeddedProvider) -> None:
    """The Hudson's widest reach (Tappan Zee, ~41.07 N, 4 km across) at zoom 11."""
    args = {"center": {"lat": 41.07, "lon": -73.89}, "zoom": 11, "width": 300, "height": 200}
    result, image = draw_unlabelled(embedded, args)
    x, y = mercator_pixel(result, 41.07, -73.89)
    assert tuple(int(c) for c in image[y, x]) == OCEAN


def _box(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([(x0, y0), (x0, y1), (x1, y1), (x1, y0), (x0, y0)], dtype=np.float64)


def test_an_inlet_deep_in_the_land_is_kept_and_a_sliver_along_the_coast_is_not() -> None:
    """One island of land 0..10 degrees square (the finer shoreline). The coarser ocean
    goes 1 degree up a 0.04-degree inlet from its south coast (a vertex at its head only),
    and its north coast lies 0.01 degrees (about 1 km) inside the land between 1 and 3
    degrees east."""
    land = [_box(0.0, 0.0, 10.0, 10.0)]
    coarse_land = np.array(
        [
            (0.0, 0.0), (0.0, 10.0), (1.0, 10.0), (1.0, 9.99), (3.0, 9.99), (3.0, 10.0),
            (10.0, 10.0), (10.0, 0.0), (5.02, 0.0), (5.02, 1.0), (4.98, 1.0), (4.98, 0.0),
            (0.0, 0.0),
        ],
        dtype=np.float64,
    )  # fmt: skip
    ocean = [_box(-20.0, -20.0, 30.0, 30.0), coarse_land]
    water, islands = estuary_polygons(ocean, land, [], [])
    assert islands == []
    assert len(water) == 1
    ring = water[0]
    assert ring[:, 1].max() == pytest.approx(1.0)  # up the whole inlet
    assert ring[:, 1].min() < 0.0  # and past the finer coast, into its sea
    assert ring[:, 0].min() >= 4.97
    assert ring[:, 0].max() <= 5.03
    # the same inlet, once it is a lake of the finer shoreline, is not drawn again
    water, _islands = estuary_polygons(ocean, land, [_box(4.9, 0.5, 5.1, 1.5)], [])
    assert water == []
