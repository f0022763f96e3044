"""get_population and get_average_income of an `area` (issue 40): a US state, county,
country or city, through the real server and worker with the official client. Population
answers from the shipped tables; income goes to the fake Census API (this stack's
policy for get_average_income is `upstream`)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.mcp.conftest import Account, Stack, connect, structured


async def call_population(stack: Stack, account: Account, arguments: dict[str, Any]) -> Any:
    async with connect(stack.mcp_url, account.api_key) as client:
        return await client.call_tool("get_population", arguments)


class TestPopulationOfAnArea:
    @pytest.mark.parametrize(
        ("area", "level", "name", "area_id", "population", "year"),
        [
            ("Texas", "state", "Texas", "US-TX", 28_995_881, 2019),
            ("TX", "state", "Texas", "US-TX", 28_995_881, 2019),
            ("Texas, USA", "state", "Texas", "US-TX", 28_995_881, 2019),
            ("Travis County, Texas", "county", "Travis County, Texas", "48453", 1_273_954, 2019),
            ("Travis County, TX", "county", "Travis County, Texas", "48453", 1_273_954, 2019),
            ("48453", "county", "Travis County, Texas", "48453", 1_273_954, 2019),
            ("Vietnam", "country", "Vietnam", "VN", 96_462_106, 2019),
            ("VN", "country", "Vietnam", "VN", 96_462_106, 2019),
        ],
    )
    async def test_states_counties_and_countries_with_their_vintage(
        self,
        stack: Stack,
        account: Account,
        area: str,
        level: str,
        name: str,
        area_id: str,
        population: int,
        year: int,
    ) -> None:
        answer = structured(await call_population(stack, account, {"area": area}))

        assert (answer["level"], answer["name"], answer["areaId"]) == (level, name, area_id)
        assert (answer["population"], answer["year"]) == (population, year)
        assert answer["postalCode"] is None
        source = "World Bank" if level == "country" else "Census Bureau, Population Estimates"
        assert source in answer["source"]

    async def test_a_city_says_its_figure_has_no_stated_year(
        self, stack: Stack, account: Account
    ) -> None:
        answer = structured(await call_population(stack, account, {"area": "Lyon, France"}))

        assert answer["level"] == "city"
        assert answer["name"].startswith("Lyon")
        assert answer["countryCode"] == "FR"
        assert 400_000 < answer["population"] < 700_000
        assert answer["year"] is None
        assert "no year" in answer["source"]

    async def test_a_city_is_never_answered_with_a_zip_codes_figure(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            city = structured(await client.call_tool("get_population", {"area": "Austin, TX"}))
            downtown = structured(
                await client.call_tool("get_population", {"postal_code": "78701"})
            )

        assert (city["level"], city["name"]) == ("city", "Austin, Texas, US")
        assert city["population"] > 10 * downtown["population"]
        assert downtown["level"] == "postal_code"
        assert downtown["areaId"] == "78701"

    async def test_an_ambiguous_name_answers_the_most_populous_and_lists_the_others(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            georgia = structured(await client.call_tool("get_population", {"area": "Georgia"}))
            county = structured(
                await client.call_tool("get_population", {"area": "Washington County"})
            )

        assert (georgia["level"], georgia["areaId"]) == ("state", "US-GA")
        assert {"level": "country", "name": "Georgia", "areaId": "GE"} in georgia["candidates"]
        assert county["level"] == "county"
        assert len(county["candidates"]) == 5
        assert all(c["name"].startswith("Washington County, ") for c in county["candidates"])


class TestAreaRefusals:
    @pytest.mark.parametrize(
        ("arguments", "code", "says"),
        [
            ({"area": "Texas", "postal_code": "78701"}, "INVALID_ARGUMENT", "exactly one"),
            ({}, "INVALID_ARGUMENT", "exactly one"),
            ({"area": "   "}, "INVALID_ARGUMENT", "blank"),
            ({"area": "x" * 129}, "INVALID_ARGUMENT", "area"),
            ({"area": "Bavaria"}, "UNSUPPORTED", "US states, US counties"),
            ({"area": "zzqqxx"}, "NOT_FOUND", "No area matches"),
            ({"area": "99999"}, "NOT_FOUND", "postal_code"),
        ],
    )
    async def test_refusals_name_what_is_covered(
        self, stack: Stack, account: Account, arguments: dict[str, Any], code: str, says: str
    ) -> None:
        result = await call_population(stack, account, arguments)

        assert result.is_error
        error = structured(result)["error"]
        assert error["code"] == code
        assert says in error["message"]


@pytest.fixture
async def upstream_warm(stack: Stack, account: Account) -> None:
    """The worker's first upstream call of an area has outlasted this stack's 4 s
    deadline on a busy machine (a cold start not yet explained, see the branch notes):
    poll until an upstream answer for an area comes."""
    deadline = time.monotonic() + 60
    async with connect(stack.mcp_url, account.api_key) as client:
        while True:
            result = await client.call_tool("get_average_income", {"area": "California"})
            late = result.is_error and structured(result)["error"]["code"] == "DEADLINE_EXCEEDED"
            if not late or time.monotonic() > deadline:
                return


@pytest.mark.usefixtures("upstream_warm")
class TestIncomeOfAnAreaUpstream:
    @pytest.mark.parametrize(
        ("area", "level", "name", "amount", "moe"),
        [
            ("Texas", "state", "Texas", 76_292, 216),
            ("Travis County, Texas", "county", "Travis County, Texas", 97_169, 1_058),
            ("48453", "county", "Travis County, Texas", 97_169, 1_058),
            ("Austin, TX", "city", "Austin city, Texas", 91_461, 1_048),
            ("United States", "country", "United States", 78_538, 157),
        ],
    )
    async def test_census_acs_figures_with_margins_of_error(
        self,
        stack: Stack,
        account: Account,
        area: str,
        level: str,
        name: str,
        amount: int,
        moe: int,
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            answer = structured(await client.call_tool("get_average_income", {"area": area}))

        assert "error" not in answer, answer
        assert (answer["level"], answer["name"]) == (level, name)
        assert (answer["amount"], answer["marginOfError"]) == (amount, moe)
        assert answer["measure"] == "median_household_income"
        assert "B19013" in answer["source"]
        assert answer["period"]

    @pytest.mark.parametrize(
        ("area", "code", "says"),
        [
            # the Census's annotation value -666666666: too few households for a median
            ("Loving County, Texas", "NOT_FOUND", "Loving County"),
            ("Vietnam", "UNSUPPORTED", "US states, counties, places"),
            ("Lyon, France", "UNSUPPORTED", "US states, counties, places"),
        ],
    )
    async def test_what_the_census_does_not_cover_is_refused(
        self, stack: Stack, account: Account, area: str, code: str, says: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("get_average_income", {"area": area})

        assert result.is_error
        error = structured(result)["error"]
        assert (error["code"], says in error["message"]) == (code, True)


class TestDescriptionsSayWhatIsCovered:
    async def test_each_tool_lists_its_levels_offline_or_upstream(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}

        population_text = tools["get_population"].description or ""
        income_text = tools["get_average_income"].description or ""
        assert "Census estimates 2019" in population_text  # embedded here
        assert "World Bank 2019" in population_text
        assert "GeoNames" in population_text
        assert "US places (Census ACS" in income_text  # upstream here
        assert "area" in tools["get_population"].input_schema["properties"]
