"""Postal codes that the data places on one point (issue 52, item 5): 42 central-London
districts on London's centroid, Paris's CEDEX codes on their arrondissement's, Lisbon's
street codes on Lisbon. Such a code's position is only its town's: said in `warnings` and
`positionPrecision`, never ranked by distance as if exact. A full code that the data holds
only by its town's range (Brazil's CEPs) falls back to the town, with a note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.geodata.catalogue import summarize
from app.geodata.providers.embedded import postal_codes
from app.geodata.providers.embedded.data import GeoData
from app.geodata.service import execute

ST_PAULS = (51.5138, -0.0984)
CHARING_CROSS = (51.5081, -0.1248)


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def code_feature(geodata: GeoData, code: str, country: str) -> int:
    (feature,) = [
        f
        for f in postal_codes.features_of(geodata, postal_codes.postal_key(code))
        if geodata.country_code(f) == country
    ]
    return feature


class TestIndex:
    def test_central_london_shares_one_point_and_a_suburb_does_not(self, geodata: GeoData) -> None:
        assert postal_codes.sharing(geodata, code_feature(geodata, "EC1A", "GB")) >= 40
        assert postal_codes.precision(geodata, code_feature(geodata, "EC1A", "GB")) == "city"
        assert postal_codes.precision(geodata, code_feature(geodata, "SE10", "GB")) is None

    def test_paris_cedex_codes_and_lisbon_street_codes_are_found(self, geodata: GeoData) -> None:
        assert postal_codes.precision(geodata, code_feature(geodata, "75702 CEDEX 13", "FR"))
        assert postal_codes.sharing(geodata, code_feature(geodata, "1100-148", "PT")) > 1000

    def test_a_us_zip_is_never_collapsed(self, geodata: GeoData) -> None:
        assert postal_codes.sharing(geodata, code_feature(geodata, "10001", "US")) == 1


class TestAnswers:
    def test_geocode_says_the_position_is_the_towns(self) -> None:
        answer = execute("geocode", {"query": "EC1A", "country": "GB"}).structured
        assert answer["results"][0]["postalCode"] == "EC1A"
        assert any("only its town's position" in w for w in answer["warnings"])

    def test_an_exact_code_has_no_such_warning(self) -> None:
        answer = execute("geocode", {"query": "SE10 London"}).structured
        assert not [w for w in answer["warnings"] if "town's position" in w]

    def test_search_nearby_lists_town_level_codes_after_the_exact_ones(self) -> None:
        lat, lon = CHARING_CROSS
        args = {"lat": lat, "lon": lon, "radius_m": 1500, "category": "postal_code"}
        places = execute("search_nearby", {**args, "limit": 50}).structured["results"]
        flags = [p["positionPrecision"] for p in places]
        assert "city" in flags
        assert None in flags
        first_flagged = flags.index("city")
        assert all(flag == "city" for flag in flags[first_flagged:])
        exact = [p["distanceM"] for p in places[:first_flagged]]
        assert exact == sorted(exact)
        assert "EC1A" in [p["code"] for p in places[first_flagged:]]

    def test_reverse_geocode_prefers_codes_placed_where_they_are(self) -> None:
        lat, lon = ST_PAULS
        answer = execute("reverse_geocode", {"lat": lat, "lon": lon}).structured
        offered = [c["code"] for c in answer["postalCodeCandidates"]]
        assert offered
        assert not {"EC1A", "EC4M", "WC2N"} & set(offered)  # on London's centroid
        assert not [w for w in answer["warnings"] if "town's position" in w]

    def test_reverse_geocode_names_town_level_codes_when_it_offers_them(self) -> None:
        # Lisbon's Baixa: every code within reach is on one of the city's shared points
        answer = execute("reverse_geocode", {"lat": 38.7107, "lon": -9.1365}).structured
        offered = [c["code"] for c in answer["postalCodeCandidates"]]
        (warning,) = [w for w in answer["warnings"] if "town's position" in w]
        assert [code for code in offered if code in warning]
        assert answer["postalCodeUncertain"] is True

    def test_reverse_geocode_puts_an_exact_code_before_cedex_codes(self) -> None:
        # Place d'Italie: Paris 13's CEDEX codes share a point 140 m away; 75013 is its own
        answer = execute("reverse_geocode", {"lat": 48.8310, "lon": 2.3555}).structured
        offered = [c["code"] for c in answer["postalCodeCandidates"]]
        assert offered[0] == "75013"
        cedex = [code for code in offered if "CEDEX" in code]
        assert cedex  # the nearest of all, listed last and named
        assert cedex == offered[-len(cedex) :]
        assert all(any(code in w for w in answer["warnings"]) for code in cedex)

    @pytest.mark.parametrize(
        ("query", "held_as", "town"),
        [("01310-100", "01000-000", "São Paulo"), ("01310-100 São Paulo", "01000-000", None)],
    )
    def test_a_full_brazilian_code_falls_back_to_its_town(
        self, query: str, held_as: str, town: str | None
    ) -> None:
        answer: dict[str, Any] = execute("geocode", {"query": query}).structured
        top = answer["results"][0]
        assert (top["countryCode"], top["postalCode"]) == ("BR", held_as)
        if town:
            assert town in top["label"]
        assert any(f"looked up as {held_as!r}" in w for w in answer["warnings"])

    def test_the_summary_says_a_distance_is_only_to_the_towns_point(self) -> None:
        lat, lon = CHARING_CROSS
        args = {"lat": lat, "lon": lon, "radius_m": 200, "category": "postal_code"}
        result = execute("search_nearby", args).structured
        assert result["results"][0]["positionPrecision"] == "city"  # none exact that near
        assert "(its town's point only)" in summarize("search_nearby", result)
