"""geocode: coordinates for a place name, postal code or airport."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from app.geodata.batch import BatchForm, BatchList, batch_result
from app.geodata.tools.common import CREDIT, PLACES, PLACES_DATASET, STRING, where
from app.geodata.tools.geocode.schemas import GeocodeArgs, GeocodeResult
from app.geodata.tools.spec import Example, ToolSpec
from app.kit.config import Settings

# What geocode resolves from the shipped datasets, and what only the upstream geocoder can.
EMBEDDED_GEOCODE_COVERAGE = (
    "the embedded data resolves cities and towns, regions, countries, postal codes and airports"
)
# Countries with postal codes in the shipped data (the US: ZIP codes; GB: outward codes, CA:
# first 3 characters); tests/geodata/test_postal_codes.py checks it against the index.
POSTAL_COUNTRIES = (
    "AD AR AS AT AU AX AZ BD BE BG BM BR BY CA CH CL CN CO CR CY CZ DE DK DO DZ EC EE ES FI FM "
    "FO FR GB GF GG GL GP GT GU HR HT HU IE IM IN IS IT JE JP KR LI LK LT LU LV MA MC MD MH MK "
    "MP MQ MT MW MX MY NC NL NO NZ PA PE PF PH PK PL PM PR PT PW RE RO RS RU SE SG SI SJ SK SM "
    "TH TR UA US UY VA VI WF YT ZA"
)
UPSTREAM_GEOCODE_COVERAGE = (
    "landmarks, natural features and street addresses need the upstream geocoder"
)


def summary(result: dict[str, Any]) -> str:
    best, *others = result["results"]
    text = f"{result['query']!r}: {where(best)}, {best['kind']}, confidence {best['confidence']:g}"
    if result.get("ambiguous"):  # the places that compete, in place of a count
        rivals = "; ".join(where(place) for place in result["candidates"][1:])
        text += f". Ambiguous: it also names {rivals}. Ask which one is meant"
    elif others:
        text += f"; {len(others)} more"
    if result.get("warnings"):  # the first in full: most often, what of the query was not used
        text += f". Warning: {result['warnings'][0].rstrip('.')} (see warnings)"
    return text + "."


def batch_item(result: dict[str, Any]) -> str:
    best = result["results"][0]
    ambiguous = " (ambiguous: see candidates)" if result.get("ambiguous") else ""
    return f"{result['query']!r}: {where(best)}{ambiguous}"


def incomplete(result: BaseModel) -> bool:
    """An address found only as its town: the upstream geocoder may know it."""
    assert isinstance(result, GeocodeResult)
    matched = result.results[0].matched
    return bool(result.warnings) or (matched is not None and matched != result.query)


def describe(spec: ToolSpec, settings: Settings) -> str:
    coverage = ""
    if spec.policy(settings) == "embedded":
        coverage = f" Here {UPSTREAM_GEOCODE_COVERAGE}: UNSUPPORTED, or its town with `warnings`."
    return spec.description.replace("{coverage}", coverage)


EXAMPLE = Example(
    {"query": "Austin, TX", "limit": 1},
    {
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
    },
    batch=(
        (
            {"query": "zzzzqqqq"},
            {
                "status": 404,
                "error": {
                    "code": "NOT_FOUND",
                    "message": "No city, region, country, postal code or airport "
                    "matches 'zzzzqqqq' (landmarks, natural features and street addresses "
                    "need the upstream geocoder).",
                },
            },
        ),
    ),
)

SPEC = ToolSpec(
    "geocode",
    "Find places by name",
    "Coordinates (WGS84) for a place: a postal code ('10115 Berlin', 'SW1A 1AA'; bare "
    "digits with `country`), a city ('Austin, TX', 'München'), a state or province, a "
    "country, an airport ('SFO', 'Heathrow'). An address resolves to its "
    "most precise known part (`kind`, `matched`), `confidence` lowered. Sorted by "
    "`confidence` (match, then prominence); `warnings` name query parts not used. "
    "Postal codes of 100 countries. "
    "Else NOT_FOUND.{coverage}" + CREDIT,
    GeocodeArgs,
    GeocodeResult,
    __name__,
    summary,
    "/v1/geocode",
    EXAMPLE,
    coverage=(
        "cities and towns worldwide (GeoNames), regions, countries (names in many "
        "languages), postal codes (US ZIP codes; in 99 other countries GeoNames' codes, "
        f"Great Britain by outward code, Canada by its first 3 characters: "
        f"{POSTAL_COUNTRIES}), airports by IATA/ICAO code and common name; a street "
        "address, landmark or natural feature is UNSUPPORTED, or answers its town with "
        "a `warnings` entry",
        "OpenStreetMap Nominatim: addresses, landmarks, everything it knows",
    ),
    batch=BatchForm(
        (BatchList("queries", ("query",), STRING),),
        ("country", "limit"),
        batch_result(GeocodeResult),
    ),
    describe=describe,
    incomplete=incomplete,
    batch_item=batch_item,
    answers_places=True,
)
