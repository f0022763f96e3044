"""Issue 41, items 1 and 2 over /v1 (a real server and worker): postal codes outside the
US in geocode, reverse_geocode and search_nearby; airports by code and common name."""

from __future__ import annotations

from typing import Any

import pytest

from app.geodata.geometry import haversine_km
from tests.v1.conftest import Client


def geocode(client: Client, **params: Any) -> dict[str, Any]:
    response = client.api.get("/v1/geocode", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


class TestPostalCodesWorldwide:
    @pytest.mark.parametrize(
        ("query", "country", "code"),
        [
            ("10115 Berlin", "DE", "10115"),
            ("04109 Leipzig", "DE", "04109"),
            ("SW1A 1AA", "GB", "SW1A"),
            ("M5V 3L9, Toronto", "CA", "M5V"),
            ("75008 Paris", "FR", "75008"),
            ("28050 Madrid", "ES", "28050"),
            ("1010 Wien", "AT", "1010"),
            ("3011 Rotterdam", "NL", "3011"),
        ],
    )
    def test_a_code_with_or_without_its_city_is_that_code(
        self, client: Client, query: str, country: str, code: str
    ) -> None:
        top = geocode(client, query=query)["results"][0]
        assert (top["kind"], top["countryCode"], top["postalCode"]) == (
            "postal_code",
            country,
            code,
        )

    def test_bare_digits_take_the_country_given_and_say_when_they_are_ambiguous(
        self, client: Client
    ) -> None:
        paris = geocode(client, query="75008", country="FR")["results"][0]
        assert (paris["countryCode"], paris["postalCode"]) == ("FR", "75008")
        assert haversine_km(paris["lat"], paris["lon"], 48.873, 2.311) < 3
        bare = geocode(client, query="75008")
        assert any("FR" in w and "country" in w for w in bare["warnings"]), bare["warnings"]

    def test_a_us_zip_never_outranks_the_foreign_place_named(self, client: Client) -> None:
        body = geocode(client, query="10115 Austin, TX")
        top = body["results"][0]
        assert (top["name"], top["admin1"], top["kind"]) == ("Austin", "Texas", "city")
        assert any("'10115'" in w for w in body["warnings"]), body["warnings"]

    def test_a_part_not_used_is_named_in_warnings(self, client: Client) -> None:
        body = geocode(client, query="10115 Qwxzyville")
        assert body["results"][0]["kind"] == "postal_code"
        assert any("qwxzyville" in w for w in body["warnings"]), body["warnings"]

    def test_reverse_geocode_names_the_nearest_postal_code_abroad(self, client: Client) -> None:
        response = client.api.get("/v1/reverse-geocode", params={"lat": 52.5163, "lon": 13.3777})
        assert response.status_code == 200, response.text
        nearest = response.json()["nearestPostalCode"]
        assert nearest["code"][:2] in ("10", "11"), nearest  # Berlin's codes
        assert len(nearest["code"]) == 5, nearest
        assert nearest["distanceM"] < 3000

    def test_search_nearby_lists_postal_codes_abroad(self, client: Client) -> None:
        response = client.api.get(
            "/v1/nearby",
            params={"lat": 48.8738, "lon": 2.295, "radius_m": 2000, "category": "postal_code"},
        )
        assert response.status_code == 200, response.text
        results = response.json()["results"]
        assert {r["countryCode"] for r in results} == {"FR"}
        assert all(r["name"].startswith("75") for r in results), results  # Paris


class TestAirportsAsPeopleNameThem:
    @pytest.mark.parametrize(
        ("query", "code"),
        [
            ("SFO", "SFO"),
            ("OAK", "OAK"),
            ("SJC", "SJC"),
            ("KSFO", "SFO"),
            ("SFO airport", "SFO"),
            ("Oakland International Airport", "OAK"),
            ("San Jose International Airport", "SJC"),
            ("Heathrow", "LHR"),
            ("Austin airport", "AUS"),
            ("Charles de Gaulle", "CDG"),
            ("O'Hare", "ORD"),
        ],
    )
    def test_the_airport_ranks_first(self, client: Client, query: str, code: str) -> None:
        top = geocode(client, query=query)["results"][0]
        assert top["kind"] == "poi", top
        assert f"({code})" in top["label"], top
