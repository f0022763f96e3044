from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from app.geodata.geometry import haversine_km
from app.geodata.service import execute
from app.kit.errors import InvalidArgument, NotFound, Unsupported


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
        # the same digits are a postal code elsewhere too: said, and `country` chooses
        warnings = execute("geocode", {"query": "10001"}).structured["warnings"]
        assert any("countries (US, " in w for w in warnings), warnings
        assert haversine_km(top["lat"], top["lon"], 40.7506, -73.9973) < 1

    @pytest.mark.parametrize(
        ("query", "code", "held_as"),
        [
            ("SW1A 1AA", "SW1A 1AA", "SW1A"),
            ("M5V 3L9, Toronto", "M5V 3L9", "M5V"),
            ("3011 AB Rotterdam", "3011 AB", "3011"),
            ("Austin, TX 78701-1234", "78701-1234", "78701"),
        ],
    )
    def test_a_code_held_by_its_area_says_so(self, query: str, code: str, held_as: str) -> None:
        result = execute("geocode", {"query": query}).structured
        assert result["results"][0]["postalCode"] == held_as
        assert f"postal code {code!r} was looked up as {held_as!r}" in " ".join(
            result["warnings"]
        ), result["warnings"]

    @pytest.mark.parametrize("query", ["10115 Berlin", "1000-001 Lisboa", "LV-1001"])
    def test_a_code_held_whole_has_no_such_warning(self, query: str) -> None:
        warnings = execute("geocode", {"query": query, "country": None}).structured["warnings"]
        assert not any("was looked up as" in w for w in warnings), warnings

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

    def test_results_credit_geonames_once_and_name_the_dataset(self) -> None:
        result = execute("geocode", {"query": "Oslo"}).structured
        assert "GeoNames (CC BY 4.0)" in result["source"]
        assert len(result["source"]) <= 120  # one short credit, not every package
        assert re.fullmatch(r"places@v\d+-[0-9a-f]{8}", result["dataset"])
        assert execute("geocode", {"query": "Lima"}).structured["dataset"] == result["dataset"]


class TestBeyondTheGazetteer:
    """Landmarks, natural features and street addresses are not in the shipped data: the
    answer says so, never a town that shares a word presented as the place."""

    @pytest.mark.parametrize(
        ("query", "what"),
        [
            ("Eiffel Tower", "a landmark"),
            ("Golden Gate Bridge", "a landmark"),
            ("Mount Everest", "a natural feature"),
            ("Mississippi River", "a natural feature"),
            ("Yellowstone National Park", "a natural feature"),
        ],
    )
    def test_unmatched_landmark_or_feature_is_unsupported_saying_what_is_covered(
        self, query: str, what: str
    ) -> None:
        with pytest.raises(Unsupported) as refused:
            geocode(query)
        assert f"reads as {what}" in refused.value.message
        assert "need the upstream geocoder" in refused.value.message
        assert "cities and towns, regions, countries, postal codes and airports" in (
            refused.value.message
        )

    @pytest.mark.parametrize(
        ("query", "town"),
        [
            ("1600 Pennsylvania Avenue NW, Washington, DC", "Washington"),
            ("221B Baker Street, London", "London"),
            ("Statue of Liberty, New York", "New York City"),
        ],
    )
    def test_an_address_answered_by_its_town_carries_a_warning(self, query: str, town: str) -> None:
        result = execute("geocode", {"query": query}).structured
        assert result["results"][0]["name"] == town
        assert result["results"][0]["confidence"] < 0.6
        (warning,) = result["warnings"]
        assert warning.startswith(repr(query.split(",")[0]))
        assert "the results match only" in warning

    def test_a_feature_matched_only_by_a_towns_alternate_name_is_flagged(self) -> None:
        result = execute("geocode", {"query": "Lake Tahoe"}).structured
        assert result["results"][0]["name"] != "Lake Tahoe"
        assert "places that carry the name" in result["warnings"][0]

    @pytest.mark.parametrize(
        "query", ["Paris", "Austin, TX", "Niagara Falls", "10001 New York", "JFK"]
    )
    def test_places_it_holds_have_no_warning(self, query: str) -> None:
        assert execute("geocode", {"query": query}).structured["warnings"] == []

    def test_nothing_matching_is_not_found_and_says_what_is_searched(self) -> None:
        with pytest.raises(NotFound, match="No city, region, country, postal code or airport"):
            geocode("Xyzzyplughville")
