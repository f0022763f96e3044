"""reverse_geocode on water within a country's waters (a lake, a bay: indices/water_grid.py)
and on land with no place within 300 km (Antarctica): the place named is only the nearest,
in the fields and in the text, never "In <town>"; coastal towns keep their answer (issue 52,
items 2 and 3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.geodata import service
from app.geodata.catalogue import summarize
from app.geodata.indices.water_grid import (
    LAKE,
    LAND,
    SEA,
    WATER_LAKE,
    WATER_LAND,
    build_water_grid,
    water_at,
)
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.water import water_kind
from app.kit.errors import NotFound


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def reverse(lat: float, lon: float) -> dict[str, Any]:
    return service.execute("reverse_geocode", {"lat": lat, "lon": lon}).structured


ON_WATER = [
    pytest.param(43.0, -87.5, "lake", "US", id="lake-michigan-off-milwaukee"),
    pytest.param(47.5, -88.0, "lake", "US", id="lake-superior"),
    pytest.param(46.45, 6.55, "lake", None, id="lake-geneva"),
    pytest.param(47.6, 9.4, "lake", None, id="lake-constance"),
    pytest.param(53.5, 108.0, "lake", "RU", id="lake-baikal"),
    pytest.param(39.1, -120.04, "lake", "US", id="lake-tahoe"),
    # the nearest place, Taquile, is an island village 30 km off whose centre the
    # shoreline has in the lake: the lake stays a lake
    pytest.param(-15.8, -69.4, "lake", None, id="lake-titicaca"),
    pytest.param(38.5, -76.4, "sea", "US", id="chesapeake-bay"),
    pytest.param(37.8, -122.35, "sea", "US", id="san-francisco-bay"),
    pytest.param(35.5, 139.8, "sea", "JP", id="tokyo-bay"),
]

# on land, at a waterfront: the town they are in, never "on water"
WATERFRONTS = [
    pytest.param(-33.8688, 151.2093, "Sydney", id="sydney-cbd"),
    pytest.param(35.8989, 14.5146, "Valletta", id="valletta"),
    pytest.param(55.6797, 12.5908, "Copenhagen", id="copenhagen-nyhavn"),
    pytest.param(40.7484, -73.9857, "New York City", id="empire-state-building"),
    pytest.param(47.6097, -122.3425, "Seattle", id="seattle-pike-place"),
]


class TestOnWater:
    @pytest.mark.parametrize(("lat", "lon", "water", "country"), ON_WATER)
    def test_says_so_and_names_the_place_as_only_the_nearest(
        self, lat: float, lon: float, water: str, country: str | None
    ) -> None:
        found = reverse(lat, lon)
        assert (found["onWater"], found["water"], found["nearestOnly"]) == (True, water, True)
        if country is not None:
            assert found["countryCode"] == country
        assert found["warnings"][0].startswith(
            f"The point is on {'a lake' if water == 'lake' else 'the sea'}"
        )
        text = summarize("reverse_geocode", found)
        assert not text.startswith("In "), text
        assert f"the nearest place is {found['label']}, " in text

    def test_lake_michigan_is_not_in_milwaukee(self) -> None:
        found = reverse(43.0, -87.5)
        text = summarize("reverse_geocode", found)
        assert text.startswith("On a lake in United States, in no town; the nearest place is ")
        assert found["distanceKm"] > 20
        assert found["admin1"] == "Wisconsin"

    @pytest.mark.parametrize(("lat", "lon", "town"), WATERFRONTS)
    def test_waterfront_towns_keep_their_answer(self, lat: float, lon: float, town: str) -> None:
        found = reverse(lat, lon)
        assert (found["onWater"], found["nearestOnly"], found["name"]) == (False, False, town)
        assert summarize("reverse_geocode", found).startswith(f"In {found['label']} (")

    def test_the_open_sea_is_water_and_at_sea(self) -> None:
        found = reverse(27.0, -90.0)
        assert (found["atSea"], found["onWater"], found["water"]) == (True, True, "sea")

    def test_the_caspian_beyond_any_countrys_22_km_is_a_lake(self) -> None:
        found = reverse(42.0, 50.5)
        assert (found["atSea"], found["onWater"], found["water"]) == (True, True, "lake")


class TestRemoteLand:
    @pytest.mark.parametrize(
        ("lat", "lon"),
        [(-90.0, 0.0), (-89.99, 139.27), (-78.464, 106.837), (-75.1, 123.33)],
        ids=["south-pole", "near-the-pole", "vostok", "concordia"],
    )
    def test_antarctica_answers_its_continent_with_the_nearest_place(
        self, lat: float, lon: float
    ) -> None:
        found = reverse(lat, lon)
        assert (found["countryCode"], found["nearestOnly"], found["onWater"]) == (
            "AQ",
            True,
            False,
        )
        assert found["warnings"][0].startswith("No place within 300 km: the point is on land")
        text = summarize("reverse_geocode", found)
        assert text.startswith("On land in Antarctica, in no town; the nearest place is ")

    def test_the_south_pole_names_its_station(self) -> None:
        found = reverse(-90.0, 0.0)
        assert found["distanceKm"] < 5, found
        assert found["kind"] == "poi"

    def test_the_open_ocean_far_from_any_place_is_still_not_found(self) -> None:
        with pytest.raises(NotFound, match="open sea or land in no country"):
            reverse(-50.0, -120.0)


class TestWaterGrid:
    """The even-odd walk of water_grid.py on rings of its own."""

    def grid(self) -> dict[str, Any]:
        square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0], [0.0, 0.0]])
        lake = np.array([[2.0, 2.0], [2.1, 2.0], [2.1, 2.1], [2.0, 2.1], [2.0, 2.0]])
        # land cut in two along x = 10 (as GSHHG cuts at 180 degrees): the shared edge
        # must not flip a point on it
        east = np.array([[10.0, 0.0], [12.0, 0.0], [12.0, 10.0], [10.0, 10.0], [10.0, 0.0]])
        return build_water_grid({WATER_LAND: [square, east], WATER_LAKE: [lake]})

    def at(self, grid: dict[str, Any], lat: float, lon: float) -> str:
        return water_at(
            lat, lon, grid["wg_cell"], grid["wg_off"], grid["wg_edge"], grid["wg_edge_class"]
        )

    def test_land_lake_and_sea(self) -> None:
        grid = self.grid()
        assert self.at(grid, 5.0, 5.0) == LAND
        assert self.at(grid, 2.05, 2.05) == LAKE
        assert self.at(grid, 2.05, 2.2) == LAND
        assert self.at(grid, -1.0, 5.0) == SEA
        assert self.at(grid, 5.0, 10.0) == LAND  # on the cut
        assert self.at(grid, 5.0, 12.1) == SEA


def test_the_index_agrees_on_known_points(geodata: GeoData) -> None:
    assert water_kind(geodata, 42.0, 50.5) == "lake"  # the Caspian
    assert water_kind(geodata, 30.0, -40.0) == "sea"
    assert water_kind(geodata, 48.8566, 2.3522) is None  # Paris
