"""Answers an agent can trust: borders, size-aware reverse geocoding, ranking, honesty."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from app.geodata import service
from app.geodata.catalogue import TOOL_SPECS
from app.geodata.providers.embedded.data import GeoData
from app.geodata.tools.search_nearby.schemas import NEARBY_CATEGORIES
from app.kit.errors import InvalidArgument, NotFound


def reverse(lat: float, lon: float) -> dict[str, Any]:
    return service.execute("reverse_geocode", {"lat": lat, "lon": lon}).structured


def geocode(query: str) -> list[dict[str, Any]]:
    return service.execute("geocode", {"query": query}).structured["results"]


class TestReverseGeocode:
    @pytest.mark.parametrize(
        ("lat", "lon", "name", "country"),
        [
            (42.3170, -83.0370, "Windsor", "CA"),  # downtown Windsor; Detroit is nearer
            (42.3314, -83.0458, "Detroit", "US"),
            (31.7200, -106.4600, "Ciudad Juárez", "MX"),
            (31.7587, -106.4869, "El Paso", "US"),
            (48.8584, 2.2945, "Paris", "FR"),  # Eiffel Tower; Neuilly's centre is nearer
            (40.7580, -73.9855, "New York City", "US"),  # a quarter does not win
            (40.7440, -74.0324, "Hoboken", "US"),  # a separate town beside a big city does
        ],
    )
    def test_border_and_inner_city_points(
        self, geodata: GeoData, lat: float, lon: float, name: str, country: str
    ) -> None:
        found = reverse(lat, lon)
        assert (found["name"], found["countryCode"]) == (name, country)

    def test_open_sea_is_not_found(self, geodata: GeoData) -> None:
        with pytest.raises(NotFound):
            reverse(0.0, -140.0)


class TestGeocodeRanking:
    @pytest.mark.parametrize(
        ("query", "name", "country"),
        [
            ("Bombay", "Mumbai", "IN"),
            ("Londres", "London", "GB"),
            ("Calcutta", "Kolkata", "IN"),
            ("St. Petersburg", "Saint Petersburg", "RU"),
        ],
    )
    def test_famous_place_beats_exact_name_hamlet(
        self, geodata: GeoData, query: str, name: str, country: str
    ) -> None:
        top = geocode(query)[0]
        assert (top["name"], top["countryCode"]) == (name, country)

    def test_state_code_reads_as_state(self, geodata: GeoData) -> None:
        top = geocode("Springfield, IL")[0]
        assert (top["countryCode"], top["admin1"]) == ("US", "Illinois")

    @pytest.mark.parametrize("query", ["Springfield", "Paris", "Birmingham", "Calcutta"])
    def test_sorted_by_confidence(self, geodata: GeoData, query: str) -> None:
        confidences = [r["confidence"] for r in geocode(query)]
        assert confidences == sorted(confidences, reverse=True)

    def test_airport_by_name(self, geodata: GeoData) -> None:
        top = geocode("Heathrow Airport")[0]
        assert (top["kind"], top["countryCode"]) == ("poi", "GB")

    def test_address_resolved_to_its_town_says_so(self, geodata: GeoData) -> None:
        top = geocode("350 Fifth Avenue, New York")[0]
        assert top["kind"] == "city"
        assert top["matched"] == "New York"
        assert top["confidence"] < 0.6

    def test_whole_query_matched(self, geodata: GeoData) -> None:
        assert geocode("Austin, TX")[0]["matched"] == "Austin, TX"


class TestSearchNearby:
    def test_category_is_an_enum_in_the_schema(self) -> None:
        schema = TOOL_SPECS["search_nearby"].args_model.model_json_schema()
        enum = schema["properties"]["category"]["enum"]
        assert set(enum) == set(NEARBY_CATEGORIES)
        assert {"hospital", "pharmacy", "school", "cafe", "supermarket"} <= set(enum)

    def test_pages_through_every_result_once(self, geodata: GeoData) -> None:
        args = {"lat": 40.7580, "lon": -73.9855, "radius_m": 3000, "category": "postal_code"}
        first = service.execute("search_nearby", {**args, "limit": 5}).structured
        assert first["truncated"] is True
        assert first["total"] > 5
        seen = [r["name"] for r in first["results"]]
        cursor = first["nextCursor"]
        while cursor:
            page = service.execute("search_nearby", {**args, "limit": 5, "cursor": cursor})
            seen += [r["name"] for r in page.structured["results"]]
            cursor = page.structured["nextCursor"]
        assert len(seen) == len(set(seen)) == first["total"]

    def test_forged_cursor_is_refused(self, geodata: GeoData) -> None:
        args = {"lat": 40.75, "lon": -73.98, "category": "postal_code", "cursor": "bm9wZQ"}
        with pytest.raises(InvalidArgument, match="cursor"):
            service.execute("search_nearby", args)


class TestCatalogue:
    def test_validating_arguments_imports_no_numeric_stack(self) -> None:
        code = (
            "import sys\n"
            "from app.geodata.service import validate_arguments\n"
            "validate_arguments('geocode', {'query': 'Austin'})\n"
            "print(sorted(m for m in ('numpy', 'scipy', 'pyarrow') if m in sys.modules))\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        assert out.strip() == "[]"

    def test_income_description_says_median(self) -> None:
        assert "MEDIAN" in TOOL_SPECS["get_average_income"].description
