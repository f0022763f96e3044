"""reverse_geocode at sea (providers/embedded/shore.py): a point on no country's land and
more than 12 nautical miles from it and from any place is in no country, town, state or
county; harbours, estuaries, beaches, small islands and border towns keep their answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.geodata import service
from app.geodata.catalogue import summarize
from app.geodata.indices.country_grid import country_at
from app.geodata.indices.nearest_grid import cell_of
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.shore import TERRITORIAL_SEA_KM, plane_km, shore_km
from app.kit.errors import NotFound


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def reverse(lat: float, lon: float) -> dict[str, Any]:
    return service.execute("reverse_geocode", {"lat": lat, "lon": lon}).structured


# answered as towns before: (point, the nearest place now named as only the nearest)
AT_SEA = [
    pytest.param(27.0, -90.0, "Louisiana, US", id="gulf-of-mexico-250-km-off-grand-isle"),
    pytest.param(65.5, -168.9, ", RU", id="bering-strait"),  # Uelen, 84 km; Alaska's 90+
    pytest.param(50.2, -1.0, "England, GB", id="english-channel"),
    pytest.param(-17.7, 180.0, "Eastern, FJ", id="koro-sea-fiji"),
]


class TestAtSea:
    @pytest.mark.parametrize(("lat", "lon", "nearest"), AT_SEA)
    def test_is_in_no_country_and_names_the_nearest_place(
        self, lat: float, lon: float, nearest: str
    ) -> None:
        found = reverse(lat, lon)
        assert found["atSea"] is True
        for field in ("countryCode", "country", "admin1", "admin2", "countyFips", "postalCode"):
            assert found[field] is None, field
        assert found["nearestPostalCode"] is None
        assert found["postalCodeCandidates"] == []
        assert nearest in found["label"]
        assert found["distanceKm"] > TERRITORIAL_SEA_KM
        (warning,) = found["warnings"]
        assert warning.startswith("The point is at sea: no country's land")
        assert f"the nearest place is {found['label']}, " in warning

    @pytest.mark.parametrize(("lat", "lon", "nearest"), AT_SEA)
    def test_summary_does_not_say_in(self, lat: float, lon: float, nearest: str) -> None:
        found = reverse(lat, lon)
        text = summarize("reverse_geocode", found)
        assert text.startswith(f"At sea; the nearest place is {found['label']}, ")
        assert not text.startswith("In ")
        assert " In " not in text

    def test_the_same_seen_from_the_other_side_of_the_antimeridian(self) -> None:
        assert reverse(-17.7, -180.0)["atSea"] is True

    def test_open_ocean_stays_not_found(self) -> None:
        with pytest.raises(NotFound):
            reverse(0.0, -30.0)


class TestInACountry:
    @pytest.mark.parametrize(
        ("lat", "lon", "country", "admin1"),
        [
            pytest.param(40.7178, -74.0431, "US", "New Jersey", id="jersey-city"),
            pytest.param(38.8816, -77.0910, "US", "Virginia", id="arlington"),
            pytest.param(42.3170, -83.0370, "CA", "Ontario", id="windsor"),
            pytest.param(42.3314, -83.0458, "US", "Michigan", id="detroit"),
            pytest.param(31.3404, -110.9343, "US", "Arizona", id="nogales-arizona"),
            pytest.param(31.3086, -110.9422, "MX", "Sonora", id="nogales-sonora"),
            pytest.param(41.9022, 12.4539, "VA", None, id="st-peters-basilica"),
            pytest.param(47.697, 8.690, "DE", None, id="busingen"),
            pytest.param(51.4375, 4.9275, "BE", None, id="baarle-hertog"),
            pytest.param(48.9854, -123.0780, "US", "Washington", id="point-roberts"),
            pytest.param(25.79, -80.13, "US", "Florida", id="miami-beach"),
            # small islands: on Natural Earth's land, or an atoll it lacks but a place holds
            pytest.param(-37.067, -12.311, "SH", None, id="tristan-da-cunha"),
            pytest.param(-0.53, 166.92, "NR", None, id="nauru"),
            pytest.param(6.2059, 160.7033, "FM", "Pohnpei", id="pingelap-atoll"),
            pytest.param(-9.2005, -171.848, "TK", None, id="nukunonu-atoll"),
        ],
    )
    def test_keeps_its_country(
        self, lat: float, lon: float, country: str, admin1: str | None
    ) -> None:
        found = reverse(lat, lon)
        assert found["atSea"] is False
        assert found["countryCode"] == country
        if admin1 is not None:
            assert found["admin1"] == admin1
        assert not any("at sea" in warning for warning in found["warnings"])
        assert summarize("reverse_geocode", found).startswith("In ")

    # water in Natural Earth's 1:10m coast, within 12 nautical miles of it: in the country,
    # on its sea (test_water.py), the place only the nearest
    @pytest.mark.parametrize(
        ("lat", "lon", "country", "admin1"),
        [
            pytest.param(40.67, -74.05, "US", "New Jersey", id="new-york-harbour"),
            pytest.param(37.8, -122.35, "US", "California", id="san-francisco-bay"),
            pytest.param(51.5, 0.8, "GB", "England", id="thames-estuary"),
            pytest.param(38.0, -76.2, "US", "Virginia", id="chesapeake-bay"),
            pytest.param(50.6, -1.1, "GB", "England", id="off-sandown-5-km"),
        ],
    )
    def test_its_waters_keep_their_country(
        self, lat: float, lon: float, country: str, admin1: str
    ) -> None:
        found = reverse(lat, lon)
        assert (found["atSea"], found["onWater"], found["nearestOnly"]) == (False, True, True)
        assert (found["countryCode"], found["admin1"]) == (country, admin1)
        assert summarize("reverse_geocode", found).startswith(f"On the sea in {found['country']}")


class TestShoreKm:
    def test_is_the_nearest_edge_of_all_within_the_territorial_sea(self, geodata: GeoData) -> None:
        """The cells searched hold every edge that near: brute force over all edges agrees,
        at any latitude and across the antimeridian."""
        fast = geodata.fast
        edges = np.frombuffer(fast.cc_edge, dtype=np.float32).reshape(-1, 4).astype(np.float64)
        rng = np.random.default_rng(12)
        # points scattered up to ~40 km around random edge ends (coasts and borders)
        picks = rng.choice(len(edges), 80)
        lats = np.clip(edges[picks, 1] + rng.uniform(-0.35, 0.35, len(picks)), -89.0, 89.0)
        lons = (edges[picks, 0] + rng.uniform(-0.6, 0.6, len(picks)) + 180.0) % 360.0 - 180.0
        for lat, lon in zip(lats.tolist(), lons.tolist(), strict=True):
            # (near in longitude too: an edge on the far side of the globe would wrap)
            east = (edges[:, 0] - lon + 180.0) % 360.0 - 180.0
            near = edges[(np.abs(edges[:, 1] - lat) < 1.0) & (np.abs(east) < 60.0)]
            x1, y1 = plane_km(near[:, 0], near[:, 1], lat, lon)
            x2, y2 = plane_km(near[:, 2], near[:, 3], lat, lon)
            dx, dy = x2 - x1, y2 - y1
            t = np.clip(-(x1 * dx + y1 * dy) / np.maximum(dx * dx + dy * dy, 1e-18), 0.0, 1.0)
            brute = float(np.hypot(x1 + t * dx, y1 + t * dy).min())
            expected = brute if brute <= TERRITORIAL_SEA_KM else float("inf")
            assert shore_km(fast, lat, lon) == pytest.approx(expected, abs=1e-6), (lat, lon)

    def test_grows_with_the_distance_off_a_coast(self, geodata: GeoData) -> None:
        # due south from the Louisiana shore at 90.5 W, into the Gulf (0.1 degree: 11 km)
        fast = geodata.fast
        cell = cell_of(29.5, -90.5)
        land = country_at(
            29.5, -90.5, cell, fast.cc_cell, fast.cc_off, fast.cc_edge, fast.cc_edge_country
        )
        assert geodata.countries[land]["code"] == "US"
        offshore = [shore_km(fast, lat, -90.5) for lat in (29.0, 28.95, 28.9)]
        assert offshore == sorted(offshore)
        assert offshore[0] > 5
        assert offshore[-1] < TERRITORIAL_SEA_KM
        assert shore_km(fast, 28.7, -90.5) == float("inf")
