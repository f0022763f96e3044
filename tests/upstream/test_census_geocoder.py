"""The US Census Bureau geocoder (geographies by coordinates) as reverse_geocode's
upstream in the US: the ZIP (ZCTA), county and state whose polygons hold the point
(issue 41, item 4). Against the fake speaking its wire format (tests/fakes)."""

from __future__ import annotations

from app.upstream.census_geocoder import CensusGeocoderApi
from app.upstream.client import RetryPolicy, UpstreamClient
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Stack, connect, structured
from tests.upstream.conftest import Caller

FAST = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.01)


def api(upstream: FakeUpstream) -> CensusGeocoderApi:
    client = UpstreamClient("census-geocoder", f"{upstream.url}/geocoder", policy=FAST)
    return CensusGeocoderApi(client)


class TestWireFormat:
    def test_reads_every_layer_and_the_vintaged_zcta_layer(self, upstream: FakeUpstream) -> None:
        found = api(upstream).geographies(30.2711, -97.7437)
        assert found.zcta == "78701"  # from "2020 Census ZIP Code Tabulation Areas"
        assert (found.state_code, found.state) == ("TX", "Texas")
        assert (found.county_fips, found.county) == ("48453", "Travis County")
        assert found.tract == "48453001100"
        assert found.place == "Austin city"

    def test_empty_layers_mean_nothing_holds_the_point(self, upstream: FakeUpstream) -> None:
        found = api(upstream).geographies(0.0, -140.0)
        assert (found.zcta, found.county_fips, found.state) == (None, None, None)


class TestThroughTheServer:
    async def test_postal_code_by_containment(
        self, upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
    ) -> None:
        async with connect(upstream_stack.mcp_url, caller.api_key) as session:
            result = await session.call_tool("reverse_geocode", {"lat": 30.2711, "lon": -97.7437})
        found = structured(result)
        assert found["postalCode"] == "78701"
        assert found["postalCodeBasis"] == "containment"
        assert (found["admin1"], found["admin2"], found["countyFips"]) == (
            "Texas",
            "Travis County",
            "48453",
        )
        assert found["postalCodeCandidates"] == []
        assert "census-geocoder" in found["dataset"]
        assert "U.S. Census Bureau geocoder" in found["source"]
        assert upstream.requests("census-geocoder") == 1
        text = result.content[0].text
        assert "ZIP 78701 (by containment: the Census ZCTA whose area holds the point)" in text

    async def test_no_zcta_at_the_point_is_said(
        self, upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
    ) -> None:
        async with connect(upstream_stack.mcp_url, caller.api_key) as session:
            result = await session.call_tool("reverse_geocode", {"lat": 30.2, "lon": -97.7})
        found = structured(result)
        assert found["postalCode"] is None
        assert found["countyFips"] == "48453"
        assert found["warnings"] == ["No ZIP Code Tabulation Area holds the point"]

    async def test_an_outage_falls_back_to_the_address_postcode_and_says_so(
        self, upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
    ) -> None:
        upstream.fail("census-geocoder", status=503, count=-1)
        async with connect(upstream_stack.mcp_url, caller.api_key) as session:
            result = await session.call_tool("reverse_geocode", {"lat": 30.2712, "lon": -97.7436})
        found = structured(result)
        assert not result.is_error
        assert found["postalCode"] == "78701"  # Nominatim's address postcode
        assert found["postalCodeBasis"] == "address"
        assert found["countyFips"] is None
        assert "US Census geocoder unavailable" in found["warnings"][0]
        assert upstream.requests("census-geocoder") >= 1
        assert "ZIP 78701 (the nearest address's postcode, not by area)" in result.content[0].text
