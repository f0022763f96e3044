"""get_demographics from the Census ACS 5-year data profiles (DP02-DP05, issue 40 items 2
and 3): a ZIP code's ZCTA, the nation, a state, a county and a place, every measure with
its margin of error; annotation values as null with a warning; an outage retryable and
free. Against the fake Census server speaking its wire format (tests/fakes/census_profile.py),
through the real server and worker (this stack's get_demographics policy is `upstream`)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import httpx
import pytest

from app.geodata.measures import BY_NAME, MEASURES
from app.geodata.tools.demographics.upstream_profiles import measure
from app.kit.errors import NotFound, Unsupported
from app.upstream.census_profile import VARIABLES, CensusProfileApi, ProfileFigure, margin_of
from app.upstream.client import RetryPolicy, UpstreamClient
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Stack, connect, structured
from tests.upstream.conftest import Caller

FAST = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.01)


def api(upstream: FakeUpstream, year: int = 2023) -> CensusProfileApi:
    client = UpstreamClient("census", f"{upstream.url}/data", policy=FAST)
    return CensusProfileApi(client, year=year)


def by_name(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in answer["measures"]}


async def demographics(stack: Stack, caller: Caller, arguments: dict[str, Any]) -> Any:
    async with connect(stack.mcp_url, caller.api_key) as session:
        return await session.call_tool("get_demographics", arguments)


class TestWireFormat:
    def test_every_measure_has_a_variable_and_its_margin_in_each_release(self) -> None:
        for year, variables in VARIABLES.items():
            assert set(variables) == {m.name for m in MEASURES}, year
        assert margin_of("DP02_0068PE") == "DP02_0068PM"
        assert margin_of("DP05_0018E") == "DP05_0018M"

    def test_one_request_per_table_with_estimates_and_margins(self, upstream: FakeUpstream) -> None:
        acs = api(upstream).profile(
            ["median_age", "households", "median_home_value"], "zip code tabulation area:94103"
        )

        assert acs.name == "ZCTA5 94103"
        assert acs.tables == ("DP02", "DP04", "DP05")
        assert upstream.requests("census") == 3
        assert (acs.figures["median_age"].estimate, acs.figures["median_age"].margin) == (
            36.9,
            1.2,
        )
        assert acs.figures["households"].estimate == 16_950
        assert set(acs.figures) == {"median_age", "households", "median_home_value"}

    def test_annotation_values_are_handed_on_and_a_missing_geography_is_not_found(
        self, upstream: FakeUpstream
    ) -> None:
        loving = api(upstream).profile(["median_home_value"], "county:301", "state:48")

        assert loving.figures["median_home_value"].estimate == -666_666_666
        with pytest.raises(NotFound):
            api(upstream).profile(["median_age"], "zip code tabulation area:00000")

    def test_a_release_whose_ids_are_not_known_is_refused_before_asking(
        self, upstream: FakeUpstream
    ) -> None:
        with pytest.raises(Unsupported, match="known: 2022, 2023"):
            api(upstream, year=2019).profile(["median_age"], "state:48")
        assert upstream.requests("census") == 0


class TestMeasures:
    @pytest.mark.parametrize(
        ("estimate", "margin", "value", "note"),
        [
            (-999_999_999, None, None, "no estimate (too few sample observations)"),
            (-888_888_888, None, None, "no estimate (not applicable)"),
            (None, None, None, "no estimate in the Census's answer"),
            (9_999, 500, None, "below $10,000 (the Census's bottom code)"),
            (250_000, -555_555_555, 250_000, "no margin of error (the estimate is controlled"),
        ],
    )
    def test_what_is_not_a_figure_is_null_and_noted(
        self, estimate: float | None, margin: float | None, value: int | None, note: str
    ) -> None:
        notes: dict[str, list[str]] = defaultdict(list)
        answered = measure(BY_NAME["median_home_value"], ProfileFigure(estimate, margin), notes)

        assert (answered.value, answered.margin_of_error) == (value, None)
        [(why, names)] = notes.items()
        assert why.startswith(note)
        assert names == ["median_home_value"]


class TestZipCode:
    async def test_the_whole_profile_with_margins_of_error(
        self, upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
    ) -> None:
        result = await demographics(upstream_stack, caller, {"postal_code": "94103"})

        assert not result.is_error, result.content
        answer = structured(result)
        assert (answer["postalCode"], answer["level"], answer["areaId"]) == (
            "94103",
            "postal_code",
            "94103",
        )
        assert (answer["year"], answer["period"]) == (2023, "2019-2023")
        assert "data profiles DP02, DP03, DP04, DP05" in answer["source"]
        assert answer["dataset"] == "census-acs5@2023/profile"
        measures = by_name(answer)
        assert [m["name"] for m in answer["measures"]] == [m.name for m in MEASURES]
        assert measures["median_age"] == {
            "topic": "age",
            "name": "median_age",
            "value": 36.9,
            "unit": "years",
            "lowerBound": False,
            "marginOfError": 1.2,
            "of": "all residents",
        }
        assert (measures["households"]["value"], measures["households"]["marginOfError"]) == (
            16_950,
            560,
        )
        assert measures["share_asian"]["value"] == 28.9  # DP05_0047PE in the 2023 release
        assert measures["share_hispanic_any_race"]["value"] == 20.5  # DP05_0076PE
        assert measures["median_home_value"]["value"] == 1_087_500
        assert all(m["marginOfError"] is not None for m in answer["measures"])
        assert answer["warnings"] == []
        assert caller.used() == 1

    async def test_topics_ask_only_their_tables(
        self, upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
    ) -> None:
        # 94027 is asked nowhere else in this file: nothing of it is cached yet
        result = await demographics(
            upstream_stack, caller, {"postal_code": "94027", "topics": ["housing"]}
        )

        answer = structured(result)
        assert {m["topic"] for m in answer["measures"]} == {"housing"}
        assert "data profiles DP04, via" in answer["source"]
        assert upstream.requests("census") == 1
        value = by_name(answer)["median_home_value"]
        # the top code "2,000,000+" is a lower bound, its margin the annotation -333333333
        assert (value["value"], value["lowerBound"], value["marginOfError"]) == (
            2_000_000,
            True,
            None,
        )
        assert any("open-ended" in w and "median_home_value" in w for w in answer["warnings"])

    async def test_a_zcta_without_residents_is_not_found_and_free(
        self, upstream_stack: Stack, caller: Caller
    ) -> None:
        nobody = await demographics(upstream_stack, caller, {"postal_code": "99999"})
        unknown = await demographics(upstream_stack, caller, {"postal_code": "00000"})

        assert [structured(r)["error"]["code"] for r in (nobody, unknown)] == ["NOT_FOUND"] * 2
        assert "99999" in structured(nobody)["error"]["message"]
        assert caller.used() == 0


class TestAreas:
    @pytest.mark.parametrize(
        ("area", "level", "name", "area_id", "households", "moe"),
        [
            ("Texas", "state", "Texas", "US-TX", 10_796_247, 13_745),
            ("Travis County, Texas", "county", "Travis County, Texas", "48453", 525_731, 2_511),
            ("48453", "county", "Travis County, Texas", "48453", 525_731, 2_511),
            ("Austin, TX", "city", "Austin city, Texas", "Austin, Texas, US", 421_640, 2_100),
            ("United States", "country", "United States", "US", 127_482_865, 219_342),
        ],
    )
    async def test_each_level_answers_its_own_figures_with_margins(
        self,
        upstream_stack: Stack,
        caller: Caller,
        area: str,
        level: str,
        name: str,
        area_id: str,
        households: int,
        moe: int,
    ) -> None:
        result = await demographics(upstream_stack, caller, {"area": area})

        assert not result.is_error, result.content
        answer = structured(result)
        assert (answer["level"], answer["name"], answer["areaId"]) == (level, name, area_id)
        assert answer["postalCode"] is None
        measures = by_name(answer)
        assert (measures["households"]["value"], measures["households"]["marginOfError"]) == (
            households,
            moe,
        )
        assert len(measures) == len(MEASURES)
        assert caller.used() == 1

    async def test_an_ambiguous_name_answers_the_most_populous_and_names_the_others(
        self, upstream_stack: Stack, caller: Caller
    ) -> None:
        answer = structured(
            await demographics(upstream_stack, caller, {"area": "Georgia", "topics": ["age"]})
        )

        assert (answer["level"], answer["areaId"]) == ("state", "US-GA")
        assert "'Georgia' may also mean: Georgia (country, GE)" in answer["warnings"]

    async def test_a_controlled_estimate_has_no_margin_and_says_why(
        self, upstream_stack: Stack, caller: Caller
    ) -> None:
        answer = structured(
            await demographics(upstream_stack, caller, {"area": "TX", "topics": ["housing"]})
        )

        units = by_name(answer)["housing_units"]
        assert (units["value"], units["marginOfError"]) == (12_107_347, None)
        assert answer["state"] == "TX"
        assert answer["warnings"] == [
            "no margin of error (the estimate is controlled, it has no sampling error): "
            "housing_units"
        ]

    async def test_an_annotation_value_is_null_with_a_warning_never_a_figure(
        self, upstream_stack: Stack, caller: Caller
    ) -> None:
        result = await demographics(upstream_stack, caller, {"area": "Loving County, Texas"})

        answer = structured(result)
        measures = by_name(answer)
        # -666666666 in the Census's answer
        assert measures["median_home_value"] == {
            "topic": "housing",
            "name": "median_home_value",
            "value": None,
            "unit": "dollars",
            "lowerBound": False,
            "marginOfError": None,
            "of": "owner-occupied housing units",
        }
        # a figure whose margin is the annotation -222222222
        assert (measures["median_age"]["value"], measures["median_age"]["marginOfError"]) == (
            34.7,
            None,
        )
        assert (
            "no estimate (too few sample observations for an estimate): median_home_value"
            in answer["warnings"]
        )
        assert (
            "no margin of error (too few sample observations for a margin): median_age"
            in answer["warnings"]
        )
        assert all(
            m["value"] is None or m["value"] > -1 for m in answer["measures"]
        )  # no sentinel as a number
        assert "median_home_value n/a" in result.content[0].text

    @pytest.mark.parametrize("area", ["Vietnam", "Lyon, France"])
    async def test_what_the_census_does_not_cover_is_unsupported_and_free(
        self, upstream_stack: Stack, caller: Caller, area: str
    ) -> None:
        result = await demographics(upstream_stack, caller, {"area": area})

        error = structured(result)["error"]
        assert error["code"] == "UNSUPPORTED"
        assert "US states, counties, places" in error["message"]
        assert caller.used() == 0

    def test_v1_answers_an_area_as_mcp_does(self, upstream_stack: Stack, caller: Caller) -> None:
        response = httpx.get(
            f"{upstream_stack.server.url}/v1/demographics",
            params={"area": "Travis County, TX", "topics": "education"},
            headers={"Authorization": f"Bearer {caller.api_key}"},
            timeout=30,
        )

        assert response.status_code == 200, response.text
        answer = response.json()
        assert (answer["level"], answer["areaId"]) == ("county", "48453")
        education = by_name(answer)["share_bachelors_or_higher"]
        assert (education["value"], education["marginOfError"], education["unit"]) == (
            56.3,
            0.5,
            "percent",
        )


class TestOutage:
    async def test_an_outage_is_retryable_and_costs_nothing(
        self, upstream_stack: Stack, caller: Caller, upstream: FakeUpstream
    ) -> None:
        upstream.fail("census", status=503, count=-1)
        # a geography no other test asks for: no cached answer stands in
        result = await demographics(upstream_stack, caller, {"postal_code": "10001"})

        assert result.is_error
        error = structured(result)["error"]
        assert error["code"] == "UPSTREAM_UNAVAILABLE"
        assert error["retryable"] is True
        assert "no credit was charged" in error["message"]
        assert "Try again" in error["message"]
        assert upstream.requests("census") >= 1
        assert caller.used() == 0


class TestDescription:
    async def test_the_tool_says_it_covers_areas_here(
        self, upstream_stack: Stack, caller: Caller
    ) -> None:
        async with connect(upstream_stack.mcp_url, caller.api_key) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}

        text = tools["get_demographics"].description or ""
        assert "Here: ZIPs, US, states, counties, US places" in text
        assert "marginOfError" in text
