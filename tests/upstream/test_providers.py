from __future__ import annotations

import pytest

from app.kit.errors import NotFound
from app.upstream.census import CensusAcsApi
from app.upstream.client import RetryPolicy, UpstreamClient
from app.upstream.nominatim import NominatimApi
from app.upstream.overpass import CATEGORY_TAGS, OverpassApi, overpass_query
from tests.fakes.upstream import FakeUpstream

FAST = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.01)


def census(upstream: FakeUpstream) -> CensusAcsApi:
    return CensusAcsApi(UpstreamClient("census", f"{upstream.url}/data", policy=FAST), year=2023)


class TestCensusAcs:
    def test_reads_population_median_and_mean_income(self, upstream: FakeUpstream) -> None:
        row = census(upstream).zcta("94103")
        assert row.population == 34_786
        assert row.median_household_income == 94_354
        assert row.per_capita_income == 66_102
        assert row.mean_household_income == round(3_541_050_300 / 17_520)
        assert row.year == 2023

    def test_unknown_zcta_is_not_found(self, upstream: FakeUpstream) -> None:
        with pytest.raises(NotFound):
            census(upstream).zcta("00000")

    def test_sentinel_values_mean_no_estimate(self, upstream: FakeUpstream) -> None:
        row = census(upstream).zcta("99999")
        assert row.median_household_income is None
        assert row.mean_household_income is None


class TestNominatim:
    def api(self, upstream: FakeUpstream) -> NominatimApi:
        return NominatimApi(UpstreamClient("nominatim", upstream.url, policy=FAST))

    def test_search_parses_jsonv2(self, upstream: FakeUpstream) -> None:
        [austin] = self.api(upstream).search("Austin, TX", country="us", limit=5)
        assert (austin.name, austin.kind, austin.country_code) == ("Austin", "city", "US")
        assert austin.admin1 == "Texas"
        assert austin.lat == pytest.approx(30.2711286)

    def test_country_filter_is_sent(self, upstream: FakeUpstream) -> None:
        assert self.api(upstream).search("Paris", country="us", limit=5) == []

    def test_reverse_finds_place_and_reports_nothing_as_none(self, upstream: FakeUpstream) -> None:
        place = self.api(upstream).reverse(48.8566, 2.3522)
        assert place is not None
        assert (place.name, place.country_code) == ("Paris", "FR")
        assert self.api(upstream).reverse(0.0, -140.0) is None


class TestOverpass:
    def test_nodes_and_way_centres_come_back(self, upstream: FakeUpstream) -> None:
        api = OverpassApi(UpstreamClient("overpass", f"{upstream.url}/api", policy=FAST))
        answer = api.nearby(30.267, -97.743, radius_m=5000, category="cafe", limit=10)
        features = answer.features
        assert {f.osm_id for f in features} == {"node/501", "way/502", "node/503"}
        assert not answer.truncated
        way = next(f for f in features if f.osm_id == "way/502")
        assert (way.lat, way.lon, way.name) == (30.2690, -97.7400, "Sixth Street Espresso")

    def test_query_refuses_anything_but_a_known_category(self) -> None:
        with pytest.raises(ValueError, match="category"):
            overpass_query(0, 0, 100, 'cafe"];out;', 10)

    @pytest.mark.parametrize(
        ("category", "selector"),
        [
            ("hospital", '["amenity"="hospital"]'),
            ("hotel", '["tourism"="hotel"]'),
            ("supermarket", '["shop"="supermarket"]'),
            ("airport", '["aeroway"="aerodrome"]'),
        ],
    )
    def test_categories_map_to_osm_tags(self, category: str, selector: str) -> None:
        assert selector in overpass_query(30.0, -97.0, 1000, category, 10)

    def test_city_is_a_union_of_cities_and_towns(self) -> None:
        query = overpass_query(30.0, -97.0, 1000, "city", 10)
        assert '["place"="city"]' in query
        assert '["place"="town"]' in query

    def test_every_search_nearby_category_has_tags(self) -> None:
        assert set(CATEGORY_TAGS) == {
            "city", "airport", "postal_code", "hospital", "pharmacy", "school", "cafe",
            "restaurant", "hotel", "fuel", "parking", "police", "supermarket",
        }  # fmt: skip
