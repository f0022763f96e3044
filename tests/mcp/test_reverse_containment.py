"""reverse_geocode over /mcp (real api server and worker, embedded data): the US state and
county whose Census polygons hold the point, a place of that state, and ZIP codes offered
as nearest centres, never as containment (issue 41, items 3 and 4)."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.mcp.conftest import Account, Stack, connect, structured


async def reverse(stack: Stack, account: Account, lat: float, lon: float) -> dict[str, Any]:
    async with connect(stack.mcp_url, account.api_key) as client:
        result = await client.call_tool("reverse_geocode", {"lat": lat, "lon": lon})
    assert not result.is_error, result.content
    return structured(result)


class TestStatesAndCounties:
    async def test_jersey_city_is_not_new_york(self, stack: Stack, account: Account) -> None:
        found = await reverse(stack, account, 40.7178, -74.0431)  # Jersey City City Hall
        assert found["name"] == "Jersey City"
        assert (found["admin1"], found["admin2"]) == ("New Jersey", "Hudson County")
        assert found["countyFips"] == "34017"
        assert found["label"].endswith(", New Jersey, US")
        assert found["warnings"] == []

    async def test_the_pentagon_is_in_arlington_virginia(
        self, stack: Stack, account: Account
    ) -> None:
        found = await reverse(stack, account, 38.8719, -77.0563)
        assert (found["admin1"], found["admin2"], found["countyFips"]) == (
            "Virginia",
            "Arlington County",
            "51013",
        )
        assert "Virginia" in found["label"]
        assert found["name"] != "Washington"

    async def test_cities_across_a_river_keep_their_state(
        self, stack: Stack, account: Account
    ) -> None:
        cases = {
            (39.0950, -84.4960): ("Kentucky", "21037"),  # Newport, not Cincinnati
            (38.6286, -90.1773): ("Illinois", "17163"),  # East St. Louis, not St. Louis
            (39.1080, -94.6280): ("Kansas", "20209"),  # Kansas City, Kansas
            (39.9445, -75.1300): ("New Jersey", "34007"),  # Camden, not Philadelphia
        }
        for (lat, lon), (state, fips) in cases.items():
            found = await reverse(stack, account, lat, lon)
            assert (found["admin1"], found["countyFips"]) == (state, fips), found
            assert found["label"].endswith(f", {state}, US"), found["label"]

    async def test_no_place_of_the_state_near_is_said(self, stack: Stack, account: Account) -> None:
        # Idaho's Bitterroot border with Montana: Idaho's nearest town is over 60 km away
        found = await reverse(stack, account, 46.07632, -114.5014)
        assert found["admin1"] == "Idaho"
        assert found["label"].endswith(", Montana, US")
        assert "No populated place of Idaho within 60 km" in found["warnings"][0]

    async def test_outside_the_us_no_county_is_claimed(
        self, stack: Stack, account: Account
    ) -> None:
        found = await reverse(stack, account, 48.8566, 2.3522)
        assert found["countryCode"] == "FR"
        assert found["countyFips"] is None
        # outside the US too, postal codes are nearest centres, never claimed by area
        assert found["postalCode"] is None
        assert found["postalCodeCandidates"][0]["code"] == "75004"
        assert found["postalCodeBasis"] == "nearest_centre"


class TestAtSea:
    async def test_the_gulf_of_mexico_is_not_a_louisiana_parish(
        self, stack: Stack, account: Account
    ) -> None:
        # 250 km off Grand Isle: in no country, said, with the nearest place kept
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("reverse_geocode", {"lat": 27.0, "lon": -90.0})
        assert not result.is_error, result.content
        found = structured(result)
        assert found["atSea"] is True
        assert (found["countryCode"], found["admin1"], found["admin2"]) == (None, None, None)
        assert found["countyFips"] is None
        assert found["label"].endswith(", Louisiana, US")
        assert "The point is at sea" in found["warnings"][0]
        summary = result.content[0].text  # type: ignore[union-attr]
        assert summary.startswith("At sea; the nearest place is ")

    async def test_new_york_harbour_is_still_new_jersey(
        self, stack: Stack, account: Account
    ) -> None:
        found = await reverse(stack, account, 40.67, -74.05)  # water in Natural Earth's coast
        assert (found["countryCode"], found["admin1"]) == ("US", "New Jersey")
        assert found["atSea"] is False


class TestZipCandidates:
    async def test_times_square_offers_likeliest_zips_and_says_so(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("reverse_geocode", {"lat": 40.758, "lon": -73.9855})
        found = structured(result)
        assert found["postalCode"] is None  # no ZIP area offline: never claimed
        assert found["postalCodeBasis"] == "estimate"
        candidates = found["postalCodeCandidates"]
        # Times Square is in 10036; 10020 (Rockefeller Center) and 10110 (a tower, no
        # residents) have nearer centres
        assert candidates[0]["code"] == "10036"
        assert all(c["noResidents"] is False for c in candidates[:1])
        assert found["nearestPostalCode"] == candidates[0]
        assert "ZIP " in result.content[0].text
        assert "(centre " in result.content[0].text

    async def test_an_agent_reading_the_text_gets_the_librarys_zip(
        self, stack: Stack, account: Account
    ) -> None:
        """Issue 52: the Seattle Central Library answered 98164 (a tower's ZIP, 239
        residents) with no doubt, and the agent fetched that ZIP's income. The text block
        alone (all some hosts show their model) must name 98104 first and say how sure."""
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("reverse_geocode", {"lat": 47.6067, "lon": -122.3325})
        summary, data = result.content[0].text.split("\n")  # type: ignore[union-attr]
        likeliest = re.search(
            r"ZIP (?:most likely|uncertain, .*likeliest first:) (\d{5}) ", summary
        )
        assert likeliest is not None, summary
        assert likeliest.group(1) == "98104"
        assert "estimated from ZIP centres, land areas and bounding boxes" in summary
        answer = json.loads(data)
        assert answer["postalCodeBasis"] == "estimate"
        assert answer["postalCodeCandidates"][0]["code"] == "98104"
        assert answer["postalCodeUncertain"] == ("ZIP uncertain" in summary)

    async def test_candidates_stay_in_the_points_county(
        self, stack: Stack, account: Account
    ) -> None:
        # Rosslyn, Arlington: Georgetown's 20007 centre is across the Potomac
        found = await reverse(stack, account, 38.8960, -77.0720)
        codes = [c["code"] for c in found["postalCodeCandidates"]]
        assert codes
        assert all(code.startswith("222") for code in codes), codes
        assert codes[0] == "22209"
        assert found["postalCodeUncertain"] is False


class TestRegionsAbroad:
    """Outside the US: the first-level region whose Natural Earth polygon holds the point
    (indices/admin1_build.py), and a place of that region."""

    async def test_gatineau_is_not_ottawa(self, stack: Stack, account: Account) -> None:
        found = await reverse(stack, account, 45.4390, -75.7330)  # Casino du Lac-Leamy
        assert found["admin1"] == "Quebec"
        assert found["label"].endswith(", Quebec, CA"), found["label"]
        assert found["name"] != "Ottawa"
        assert found["countyFips"] is None

    async def test_places_across_a_river_keep_their_region(
        self, stack: Stack, account: Account
    ) -> None:
        cases = {
            (50.0000, 8.3070): "Hessen",  # Mainz-Kostheim (Wiesbaden), not Mainz
            (19.3980, -99.2760): "México",  # Interlomas, not Mexico City
            (28.6270, 77.3650): "Uttar Pradesh",  # Noida, not Delhi
        }
        for (lat, lon), region in cases.items():
            found = await reverse(stack, account, lat, lon)
            assert found["admin1"] == region, found
            assert f", {region}, " in found["label"], found["label"]

    async def test_no_place_of_the_region_near_is_said(
        self, stack: Stack, account: Account
    ) -> None:
        # Lloydminster's Saskatchewan side: the city is Alberta's in GeoNames
        found = await reverse(stack, account, 53.2800, -109.9800)
        assert found["admin1"] == "Saskatchewan"
        assert "No populated place of Saskatchewan within 60 km" in found["warnings"][0]

    async def test_a_town_on_a_generalised_line_keeps_its_region(
        self, stack: Stack, account: Account
    ) -> None:
        # Oststeinbek: Hamburg's 1:10 M outline takes in the town centre
        found = await reverse(stack, account, 53.5430, 10.1630)
        assert (found["name"], found["admin1"]) == ("Oststeinbek", "Schleswig-Holstein")
        assert "On the line between Schleswig-Holstein and Hamburg" in found["warnings"][0]

    async def test_where_no_polygon_fits_it_is_said(self, stack: Stack, account: Account) -> None:
        # Natural Earth's Moscow does not match GeoNames' (most places in it are the
        # oblast's): the place's own region is answered, and the warning says why
        found = await reverse(stack, account, 55.7558, 37.6173)
        assert (found["name"], found["admin1"]) == ("Moscow", "Moskva")
        assert found["warnings"][0] == "admin1 is Moscow's: no boundary holds the point"
        # and Moscow's postal codes nearest the Kremlin all sit on the city's one point
        assert "only their town's position" in found["warnings"][1]


class TestWhatTheModelReads:
    """The text block alone, as a model reads it (issue 52, items 2 and 3): a point on a
    lake or in Antarctica is never said to be "In" a town."""

    async def text(self, stack: Stack, account: Account, lat: float, lon: float) -> str:
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("reverse_geocode", {"lat": lat, "lon": lon})
        assert not result.is_error, result.content
        return result.content[0].text  # type: ignore[union-attr]

    async def test_a_point_in_lake_michigan_is_on_a_lake(
        self, stack: Stack, account: Account
    ) -> None:
        text = await self.text(stack, account, 43.0, -87.5)
        assert text.startswith("On a lake in United States, in no town; the nearest place is ")
        assert "In Milwaukee" not in text
        assert ", Wisconsin, US, " in text  # the nearest place, with its distance
        assert "km away" in text

    async def test_the_south_pole_is_in_antarctica(self, stack: Stack, account: Account) -> None:
        text = await self.text(stack, account, -90.0, 0.0)
        assert text.startswith("On land in Antarctica, in no town; the nearest place is ")
