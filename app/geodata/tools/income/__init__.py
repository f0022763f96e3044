"""get_average_income: the median household income of a US ZIP code or an area."""

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
from app.geodata.tools.income.schemas import IncomeArgs, IncomeResult
from app.geodata.tools.spec import Example, ToolSpec

# What the area levels are answered from: offline (shipped data) and upstream (Census ACS).
AREA_COVERAGE = {
    False: "Here: ZIPs only; states, counties, places need the "
    "upstream Census ACS (not enabled): UNSUPPORTED.",
    True: "Here: ZIPs, states, counties, US places (Census ACS, "
    "`marginOfError`); countries, other cities: UNSUPPORTED.",
}


def summary(result: dict[str, Any]) -> str:
    if result.get("level") in ("circle", "shape"):  # not a median: said, with the method's limits
        amount = f"${result['amount']:,}" + (" or more" if result.get("lowerBound") else "")
        return f"{result['name']}: {result['measure']} {amount}." + ring_notes(result)
    amount = f"${result['amount']:,}" + (" or more" if result.get("lowerBound") else "")
    period = result.get("period") or result["year"]
    line = f"{zip_place(result)}: median household income {amount} ({period})."
    return line + other_readings(result)


def batch_item(result: dict[str, Any]) -> str:
    return f"{zip_place(result)} ${result['amount']:,}" + ("+" if result["lowerBound"] else "")


def income_range(answered: list[dict[str, Any]]) -> str:
    """Medians do not add: the lowest and the highest (one item: nothing to say)."""
    if len(answered) < 2:
        return ""
    low = min(answered, key=lambda r: r["amount"])
    high = max(answered, key=lambda r: r["amount"])
    return f"; median household income from {batch_item(low)} to " + batch_item(high)


EXAMPLE = Example(
    {"postal_code": "94103"},
    {
        "postalCode": "94103",
        "countryCode": "US",
        "amount": 116438,
        "currency": "USD",
        "measure": "median_household_income",
        "year": 2024,
        "period": "2020-2024",
        "lowerBound": False,
        "source": "U.S. Census Bureau, ACS 5-Year Estimates, Subject Table S1903 (vintage "
        "2020–2024)",
        "dataset": "median-income@1.0.0",
    },
    batch=ZIP_BATCH_ERRORS,
)

SPEC = ToolSpec(
    "get_average_income",
    "Median household income of a US ZIP code or area",
    "MEDIAN household income (not the mean), USD, of a US ZIP code (`postal_code`) "
    "or an `area`, `around` circle or `within` shape (as in get_population). "
    "Top-coded: `lowerBound` true. "
    "{coverage}" + CREDIT,
    IncomeArgs,
    IncomeResult,
    __name__,
    summary,
    "/v1/average-income",
    EXAMPLE,
    coverage=(
        "US ZIP codes: ACS 5-year median household income, 2020-2024, else 2018-2022",
        "the Census Bureau's ACS API",
    ),
    batch=BatchForm(RING_LISTS, ("country",), batch_result(IncomeResult)),
    describe=coverage_by_policy(AREA_COVERAGE),
    batch_item=batch_item,
    batch_gist=income_range,
)
