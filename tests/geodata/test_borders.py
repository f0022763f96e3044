"""reverse_geocode at borders (Natural Earth refined by OpenStreetMap-derived polygons near
its edges) and inside big cities (the quarter rule). Points are published coordinates of
landmarks and town centres, checked against the side of the border they are on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.geodata import service
from app.geodata.indices.country_grid import country_at
from app.geodata.indices.nearest_grid import cell_of
from app.geodata.providers.embedded.borders import BorderRefiner
from app.geodata.providers.embedded.data import GeoData


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def reverse(lat: float, lon: float) -> dict[str, Any]:
    return service.execute("reverse_geocode", {"lat": lat, "lon": lon}).structured


def natural_earth_country(data: GeoData, lat: float, lon: float) -> str | None:
    fast = data.fast
    index = country_at(
        lat, lon, cell_of(lat, lon), fast.cc_cell, fast.cc_off, fast.cc_edge, fast.cc_edge_country
    )
    return data.countries[index]["code"] if index >= 0 else None


class TestBorders:
    @pytest.mark.parametrize(
        ("lat", "lon", "country"),
        [
            (51.155, 14.988, "DE"),  # Görlitz old town, 300 m west of the Neisse
            (41.9022, 12.4568, "VA"),  # St. Peter's Square
            (41.9022, 12.4539, "VA"),  # St. Peter's Basilica
            (41.9031, 12.4663, "IT"),  # Castel Sant'Angelo, Rome, 800 m east of the wall
            (47.66, 9.175, "DE"),  # Konstanz, on the lake shore by the Swiss border
            (47.697, 8.690, "DE"),  # Büsingen am Hochrhein, German exclave in Switzerland
            (52.35, 14.56, "PL"),  # Słubice, across the Oder from Frankfurt
            (52.3471, 14.5506, "DE"),  # Frankfurt (Oder)
            (48.5818, 7.7509, "FR"),  # Strasbourg cathedral
            (48.5722, 7.8153, "DE"),  # Kehl, across the Rhine
            (47.5596, 7.5886, "CH"),  # Basel
            (47.5936, 7.6208, "DE"),  # Weil am Rhein
            (57.7778, 26.0473, "EE"),  # Valga ...
            (57.7752, 26.0166, "LV"),  # ... and Valka, one town split by the border
            (31.7587, -106.4869, "US"),  # El Paso
            (31.7200, -106.4600, "MX"),  # Ciudad Juárez
            (43.9356, 12.4473, "SM"),  # City of San Marino
            (43.7394, 7.4276, "MC"),  # Monte Carlo casino
            # Baarle: Belgian enclaves in the Netherlands, which Natural Earth leaves out
            # (points inside the largest enclave, H1, and north of the village)
            (51.4375, 4.9275, "BE"),
            (51.4400, 4.9250, "BE"),
            (51.4600, 4.9200, "NL"),
        ],
    )
    def test_side_of_the_border(self, lat: float, lon: float, country: str) -> None:
        assert reverse(lat, lon)["countryCode"] == country

    @pytest.mark.parametrize(
        ("lat", "lon", "natural_earth", "refined"),
        [
            (51.155, 14.988, "PL", "DE"),  # Görlitz
            (41.9022, 12.4568, "IT", "VA"),  # St. Peter's Square
            (47.697, 8.690, "CH", "DE"),  # Büsingen: Natural Earth has no exclave
        ],
    )
    def test_the_finer_source_decides_near_an_edge(
        self, geodata: GeoData, lat: float, lon: float, natural_earth: str, refined: str
    ) -> None:
        assert natural_earth_country(geodata, lat, lon) == natural_earth
        assert reverse(lat, lon)["countryCode"] == refined

    def test_only_cells_where_countries_meet_ask_the_finer_source(self, geodata: GeoData) -> None:
        fast = geodata.fast
        assert not fast.cc_border[cell_of(48.8566, 2.3522)]  # Paris
        assert not fast.cc_border[cell_of(51.34, 12.37)]  # Leipzig
        assert fast.cc_border[cell_of(51.155, 14.988)]  # Görlitz, on the Neisse
        refiner = BorderRefiner(geodata.borders.zone_countries)
        assert not refiner.opened
        germany = geodata.country_by_code["DE"]
        assert refiner.country(fast, 51.155, 14.988, cell_of(51.155, 14.988)) == germany
        assert refiner.opened
        # Europe/Belgrade also covers Kosovo: not trusted, Natural Earth decides
        assert refiner.country(fast, 42.9106, 21.1931, cell_of(42.9106, 21.1931)) is None

    def test_untrusted_zone_keeps_natural_earth(self, geodata: GeoData) -> None:
        # Podujevo, Kosovo, 10 km from Serbia: its zone is Europe/Belgrade
        assert natural_earth_country(geodata, 42.9106, 21.1931) == "XK"
        assert reverse(42.9106, 21.1931)["countryCode"] == "XK"

    def test_zones_spanning_two_countries_are_not_trusted(self, geodata: GeoData) -> None:
        zones = geodata.borders.zone_countries
        code = {i: row["code"] for i, row in enumerate(geodata.countries)}
        assert code[zones["Europe/Vatican"]] == "VA"
        assert code[zones["Europe/Busingen"]] == "DE"
        assert code[zones["Europe/Berlin"]] == "DE"
        # Serbia's zone also covers Kosovo, which Natural Earth shows as a country
        assert "Europe/Belgrade" not in zones


class TestQuarters:
    def test_cn_tower_is_toronto(self) -> None:
        # 'Waterfront Communities-The Island' (66,000 people) lies in 'Toronto county', the
        # division named after the city, which has no admin2 of its own in GeoNames
        found = reverse(43.6426, -79.3871)
        assert (found["name"], found["countryCode"]) == ("Toronto", "CA")

    def test_a_quarter_is_no_locality(self, geodata: GeoData) -> None:
        names = {geodata.names[int(f)] for f in geodata.localities.features}
        assert "Waterfront Communities-The Island" not in names
        assert "Toronto" in names

    @pytest.mark.parametrize(
        ("lat", "lon", "name"),
        [
            (43.589, -79.644, "Mississauga"),  # a city of its own beside Toronto
            (40.3083, -3.7327, "Getafe"),  # in the province named like Madrid, yet a town
            (40.4168, -3.7038, "Madrid"),
        ],
    )
    def test_separate_towns_stay(self, lat: float, lon: float, name: str) -> None:
        assert reverse(lat, lon)["name"] == name
