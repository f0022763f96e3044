"""Postal codes outside the US (issue 41, item 1): what the index holds and how a query's
codes are read."""

from __future__ import annotations

import pytest

from app.geodata.indices.zips_build import US_TERRITORIES
from app.geodata.providers.embedded import postal_codes
from app.geodata.providers.embedded.data import GeoData
from app.geodata.tools.geocode import POSTAL_COUNTRIES


class TestTokens:
    @pytest.mark.parametrize(
        ("query", "keys"),
        [
            ("SW1A 1AA", ["SW1A"]),
            ("sw1a 1aa, London", ["SW1A"]),
            ("M5V 3L9, Toronto", ["M5V"]),
            ("3011 AB Rotterdam", ["3011"]),
            ("1010 AT", ["1010"]),
            ("1000-001 Lisboa", ["1000001"]),
            ("Austin, TX 78701-1234", ["78701"]),
            ("Berlin", []),
        ],
    )
    def test_codes_are_read_as_written(self, query: str, keys: list[str]) -> None:
        found = postal_codes.tokens(query, {"AT", "DE", "US"})
        assert [t.key for t in found] == keys


class TestIndex:
    def test_the_stated_countries_are_those_indexed(self, geodata: GeoData) -> None:
        # the US and the territories that use its ZIP codes come from the ZIP table
        stated = set(POSTAL_COUNTRIES.split()) - {"US"} - US_TERRITORIES
        assert stated == set(geodata.postal_countries)

    def test_nearest_in_a_dense_city_and_none_at_sea(self, geodata: GeoData) -> None:
        near = postal_codes.nearest(geodata, 1.2840, 103.8510, 40.0)  # Singapore CBD
        assert len(near) == 1
        assert near[0][1] < 1.0
        assert postal_codes.nearest(geodata, 0.0, -140.0, 40.0) == []

    def test_the_nearest_few_are_distinct_codes_nearest_first(self, geodata: GeoData) -> None:
        near = postal_codes.nearest(geodata, 48.8584, 2.2945, 40.0, 3)  # the Eiffel Tower
        codes = [geodata.names[feature] for feature, _ in near]
        assert len(set(codes)) == len(codes) == 3
        assert [km for _, km in near] == sorted(km for _, km in near)
