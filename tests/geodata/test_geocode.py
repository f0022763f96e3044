from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.errors import InvalidArgument, NotFound
from app.geodata.geometry import haversine_km
from app.geodata.service import execute


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def geocode(query: str, **extra: Any) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = execute("geocode", {"query": query, **extra}).structured[
        "results"
    ]
    return results


class TestCities:
    def test_austin_tx(self) -> None:
        top = geocode("Austin, TX")[0]
        assert (top["name"], top["kind"], top["admin1"]) == ("Austin", "city", "Texas")
        assert haversine_km(top["lat"], top["lon"], 30.267, -97.743) < 5
        assert top["confidence"] >= 0.9

    def test_state_without_comma(self) -> None:
        assert geocode("Austin TX")[0]["label"] == "Austin, Texas, US"

    def test_portland_maine_and_oregon_are_apart(self) -> None:
        maine = geocode("Portland, ME")[0]
        oregon = geocode("Portland, OR")[0]
        assert (maine["admin1"], oregon["admin1"]) == ("Maine", "Oregon")
        assert haversine_km(maine["lat"], maine["lon"], oregon["lat"], oregon["lon"]) > 4000

    def test_ambiguous_name_ranks_by_population_with_lower_confidence(self) -> None:
        results = geocode("Portland", limit=3)
        assert [r["admin1"] for r in results[:2]] == ["Oregon", "Maine"]
        assert results[0]["confidence"] > results[1]["confidence"]

    def test_city_country(self) -> None:
        assert geocode("Paris, France")[0]["countryCode"] == "FR"
        assert geocode("Paris, TX")[0]["admin1"] == "Texas"

    def test_alternate_names(self) -> None:
        for query in ("München", "東京", "NYC"):
            top = geocode(query)[0]
            assert top["kind"] == "city", query
        assert geocode("München")[0]["countryCode"] == "DE"

    def test_country_names_in_other_languages(self) -> None:
        # Unicode CLDR territory names, as babel ships them
        for query, code in (("Deutschland", "DE"), ("Allemagne", "DE"), ("日本", "JP")):
            top = geocode(query)[0]
            assert (top["kind"], top["countryCode"]) == ("country", code), query

    def test_a_city_keeps_its_name_when_a_language_calls_a_country_so(self) -> None:
        # 'Tunis' is Tunisia, 'Columbia' Colombia, 'Brasilia' Brazil in some languages
        for query, code in (("Tunis", "TN"), ("Columbia", "US"), ("Brasilia", "BR")):
            top = geocode(query)[0]
            assert (top["kind"], top["countryCode"]) == ("city", code), query

    def test_new_york_is_the_city_first(self) -> None:
        kinds = [r["kind"] for r in geocode("New York", limit=2)]
        assert kinds == ["city", "admin1"]


class TestOtherKinds:
    def test_zip_code(self) -> None:
        top = geocode("10001")[0]
        assert (top["kind"], top["postalCode"], top["confidence"]) == ("postal_code", "10001", 1.0)
        assert haversine_km(top["lat"], top["lon"], 40.7506, -73.9973) < 1

    def test_state_and_country(self) -> None:
        texas = geocode("Texas")[0]
        assert (texas["kind"], texas["countryCode"]) == ("admin1", "US")
        germany = geocode("Germany")[0]
        assert (germany["kind"], germany["countryCode"]) == ("country", "DE")

    def test_airport_code(self) -> None:
        top = geocode("JFK")[0]
        assert top["kind"] == "poi"
        assert "Kennedy" in top["name"]

    def test_address_resolves_to_its_most_precise_known_part(self) -> None:
        results = geocode("1600 Pennsylvania Ave NW, Washington, DC 20500")
        assert (results[0]["kind"], results[0]["postalCode"]) == ("postal_code", "20500")
        assert (results[1]["kind"], results[1]["name"]) == ("city", "Washington")
        no_zip = geocode("742 Evergreen Terrace, Springfield, Illinois")[0]
        assert (no_zip["kind"], no_zip["admin1"]) == ("city", "Illinois")
        unknown_town = geocode("12 Main St, Nowheresville, Texas")[0]
        assert (unknown_town["kind"], unknown_town["name"]) == ("admin1", "Texas")

    def test_country_filter_and_limit(self) -> None:
        results = geocode("Paris", country="US", limit=2)
        assert len(results) == 2
        assert {r["countryCode"] for r in results} == {"US"}

    def test_nothing_is_not_found(self) -> None:
        with pytest.raises(NotFound):
            geocode("Xyzzyplughville")

    def test_unknown_country_code_is_invalid(self) -> None:
        with pytest.raises(InvalidArgument, match="country"):
            geocode("Paris", country="XX")

    def test_results_cite_geonames_and_cldr(self) -> None:
        source = execute("geocode", {"query": "Oslo"}).structured["source"]
        assert "GeoNames" in source
        assert "Unicode CLDR" in source
