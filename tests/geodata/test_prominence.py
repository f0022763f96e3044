"""Ranking by prominence: airports by OurAirports class in search_nearby, cities by
population, and geocode's own names before other places' alternate names."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path
from typing import Any

import pytest

from app.geodata.geometry import haversine_km
from app.geodata.indices.airport_classes import MATCH_KM, OurAirportsRecord, classify
from app.geodata.indices.sources import Airport
from app.geodata.providers.embedded.data import GeoData
from app.geodata.service import execute

LONDON = {"lat": 51.5074, "lon": -0.1278}
LONDON_AIRPORTS = {**LONDON, "radius_m": 50000, "category": "airport"}


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def nearby(**args: Any) -> dict[str, Any]:
    result: dict[str, Any] = execute("search_nearby", args).structured
    return result


def geocode(query: str, limit: int = 10) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = execute("geocode", {"query": query, "limit": limit}).structured[
        "results"
    ]
    return results


def airport_feature(data: GeoData, code: str) -> int:
    return next(int(f) for f in data.airports.features if data.codes[int(f)] == code)


class TestAirportClasses:
    def test_hubs_are_large_with_scheduled_service(self, geodata: GeoData) -> None:
        for code in ("LHR", "JFK", "CDG", "FCO"):
            assert data_class(geodata, code) == ("large_airport", True), code

    def test_airfields_without_airlines_are_not(self, geodata: GeoData) -> None:
        assert data_class(geodata, "NHT") == ("medium_airport", False)  # RAF Northolt
        assert data_class(geodata, "EGTR") == ("small_airport", False)  # Elstree

    def test_a_reused_code_far_away_gives_no_class(self, geodata: GeoData) -> None:
        # airportsdata's SSXH is a farm strip in Mato Grosso; OurAirports' SSXH is 1,500 km east
        assert data_class(geodata, "SSXH") == (None, None)

    def test_one_airport_misplaced_in_airportsdata_takes_ourairports_point(
        self, geodata: GeoData
    ) -> None:
        brussels = airport_feature(geodata, "BRU")  # airportsdata: 42 km south-west
        lat, lon = float(geodata.lat[brussels]), float(geodata.lon[brussels])
        assert haversine_km(lat, lon, 50.9014, 4.4844) < 2  # Zaventem

    def test_join_rules(self) -> None:
        airport = Airport("SXXX", "", "Strip", "", "", "BR", -13.7, -56.3)
        far = OurAirportsRecord("small_airport", False, "Other", "", "BR", -14.26, -41.82)
        near = OurAirportsRecord("medium_airport", True, "Strip", "", "BR", -13.71, -56.29)
        assert classify(airport, {"SXXX": [far]}) is None
        known = classify(airport, {"SXXX": [far, near]})
        assert known is not None
        assert (known.type, known.scheduled, known.moved_to) == ("medium_airport", True, None)
        coded = Airport("EBBR", "BRU", "Brussels Airport", "", "", "BE", 50.54, 4.29)
        same = OurAirportsRecord(
            "large_airport", True, "Brussels Airport", "BRU", "BE", 50.9014, 4.4844
        )
        moved = classify(coded, {"EBBR": [same]})
        assert haversine_km(50.54, 4.29, 50.9014, 4.4844) > MATCH_KM
        assert moved is not None
        assert moved.moved_to == (50.9014, 4.4844)
        other_country = OurAirportsRecord("large_airport", True, "X", "BRU", "NL", 50.9014, 4.4844)
        assert classify(coded, {"EBBR": [other_country]}) is None


def data_class(data: GeoData, code: str) -> tuple[str | None, bool | None]:
    return data.airport_class(airport_feature(data, code))


class TestNearbyAirports:
    def test_london_hubs_come_first(self) -> None:
        result = nearby(**LONDON_AIRPORTS)
        assert result["order"] == "prominence"
        codes = [p["code"] for p in result["results"]]
        assert set(codes[:4]) == {"LHR", "LGW", "LTN", "STN"}
        assert codes.index("LCY") < codes.index("NHT")  # scheduled service first
        assert codes.index("NHT") < codes.index("EGTR")  # RAF Northolt, then Elstree
        assert {p["type"] for p in result["results"][:4]} == {"large_airport"}

    def test_nearer_first_among_equals(self) -> None:
        places = nearby(**LONDON_AIRPORTS, limit=50)["results"]
        for _key, group in groupby(places, key=lambda p: (p["type"], p["scheduledService"])):
            distances = [p["distanceM"] for p in group]
            assert distances == sorted(distances)

    def test_order_distance_is_nearest_first(self) -> None:
        result = nearby(**LONDON_AIRPORTS, limit=50, order="distance")
        assert result["order"] == "distance"
        distances = [p["distanceM"] for p in result["results"]]
        assert distances == sorted(distances)
        assert result["results"][0]["code"] == "LCY"

    def test_pages_cut_one_order(self) -> None:
        whole = nearby(**LONDON_AIRPORTS, limit=50)
        assert whole["total"] > 9
        seen: list[str] = []
        cursor = None
        while True:
            page = nearby(**LONDON_AIRPORTS, limit=4, **({"cursor": cursor} if cursor else {}))
            seen += [p["name"] for p in page["results"]]
            cursor = page["nextCursor"]
            if cursor is None:
                break
        assert seen == [p["name"] for p in whole["results"]]
        assert len(seen) == len(set(seen)) == whole["total"]


class TestNearbyCities:
    def test_cities_by_population(self) -> None:
        result = nearby(lat=48.8566, lon=2.3522, radius_m=20000, category="city", limit=20)
        people = [p["population"] for p in result["results"]]
        assert result["results"][0]["name"] == "Paris"
        assert people == sorted(people, reverse=True)
        assert all(p["type"] is None for p in result["results"])

    def test_zip_codes_are_nearest_first(self) -> None:
        result = nearby(lat=40.758, lon=-73.9855, radius_m=1500, category="postal_code")
        assert result["order"] == "distance"
        distances = [p["distanceM"] for p in result["results"]]
        assert distances == sorted(distances)


class TestGeocodeProminence:
    def test_rome_is_the_capital_then_its_namesakes(self) -> None:
        results = geocode("Rome")
        assert (results[0]["countryCode"], results[0]["population"]) == ("IT", 2318895)
        names = [r["name"] for r in results]
        # an alternate name of another place (GeoNames lists 'rome' for Lomé) comes after
        # every place called Rome, with a low confidence
        first_other = next((i for i, n in enumerate(names) if n != "Rome"), len(names))
        assert all(n != "Rome" for n in names[first_other:])
        assert all(r["confidence"] <= 0.48 for r in results[first_other:])

    @pytest.mark.parametrize(
        ("query", "other"),
        [("Philadelphia", "Amman"), ("Salem", "Jerusalem"), ("Cancún", "Changchun")],
    )
    def test_other_places_alternate_names_yield(self, query: str, other: str) -> None:
        results = geocode(query)
        assert results[0]["name"] != other
        for result in results:
            if result["name"] == other:
                assert result["confidence"] <= 0.48

    def test_a_famous_alternate_name_still_wins(self) -> None:
        # no place is called Bombay or Peking as prominently as Mumbai and Beijing
        assert geocode("Bombay")[0]["name"] == "Mumbai"
        assert geocode("Peking")[0]["name"] == "Beijing"

    def test_a_shortened_own_name_is_not_weak(self) -> None:
        names = [r["name"] for r in geocode("Newcastle", limit=3)]
        assert "Newcastle upon Tyne" in names

    def test_a_region_named_after_its_city_keeps_its_confidence(self) -> None:
        city, region = geocode("Seoul", limit=2)
        assert (city["kind"], region["kind"]) == ("city", "admin1")
        assert region["confidence"] >= 0.7

    def test_basis_is_exposed(self) -> None:
        assert geocode("France", limit=1)[0]["population"] > 60_000_000
        assert geocode("Texas", limit=1)[0]["population"] is None  # a region: not counted
        heathrow = geocode("LHR", limit=1)[0]
        assert (heathrow["kind"], heathrow["type"]) == ("poi", "large_airport")
