"""search_nearby: places of one category near a point."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from app.geodata.tools.common import CREDIT, PLACES, PLACES_DATASET, km
from app.geodata.tools.search_nearby.schemas import (
    NEARBY_CATEGORIES,
    SearchNearbyArgs,
    SearchNearbyResult,
)
from app.geodata.tools.spec import Example, ToolSpec
from app.kit.config import Settings
from app.kit.errors import Unsupported

# search_nearby's categories in the shipped datasets; the others need the place search.
OFFLINE_CATEGORIES = ("city", "airport", "postal_code")
MORE_PLACES = 3  # nearby places named after the first


def nearby_categories(settings: Settings) -> tuple[str, ...]:
    """The categories search_nearby answers under this deployment's policy."""
    if SPEC.policy(settings) == "embedded":
        return OFFLINE_CATEGORIES
    return NEARBY_CATEGORIES


def describe(spec: ToolSpec, settings: Settings) -> str:
    categories = ", ".join(nearby_categories(settings))
    return spec.description.replace("{categories}", f"Categories here: {categories}.")


def arguments_schema(spec: ToolSpec, settings: Settings) -> dict[str, Any]:
    """Lists only the categories answered here."""
    schema = spec.args_model.model_json_schema()
    schema["properties"]["category"]["enum"] = list(nearby_categories(settings))
    return schema


def check(args: BaseModel, settings: Settings) -> None:
    assert isinstance(args, SearchNearbyArgs)
    covered = nearby_categories(settings)
    if args.category not in covered:
        raise Unsupported(
            f"category {args.category!r} is not covered by this deployment (it needs the "
            f"upstream place search, which is not enabled here); it answers: "
            f"{', '.join(covered)}"
        )


def summary(result: dict[str, Any]) -> str:
    places = result["results"]
    total = result.get("total")
    count = f"{total:,}" if total is not None else f"{len(places)}+"
    listed = ", ".join(
        f"{p['name']}"
        + (f" ({p['code']})" if p.get("code") else "")
        + f" {km(p['distanceM'])}"
        + (" (its town's point only)" if p.get("positionPrecision") else "")
        for p in places[:MORE_PLACES]
    )
    text = (
        f"{count} places of category {result['category']} within {km(result['radiusM'])}: {listed}"
    )
    if len(places) > MORE_PLACES:
        text += f" and {len(places) - MORE_PLACES} more on this page"
    text += "."
    if result.get("nextCursor"):
        text += " More: pass nextCursor as cursor."
    return text


EXAMPLE = Example(
    {
        "lat": 30.2672,
        "lon": -97.7431,
        "radius_m": 20000,
        "category": "airport",
        "limit": 2,
    },
    {
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
)

SPEC = ToolSpec(
    "search_nearby",
    "Places near a point",
    "Places of one `category` within `radius_m` of a point, with `distanceM`, most "
    'prominent first (`order` "distance": nearest first). {categories} NOT_FOUND when '
    "none is in range." + CREDIT,
    SearchNearbyArgs,
    SearchNearbyResult,
    __name__,
    summary,
    "/v1/nearby",
    EXAMPLE,
    coverage=(
        f"categories {', '.join(OFFLINE_CATEGORIES)} (postal codes: the countries "
        "listed for geocode)",
        "OpenStreetMap Overpass: also "
        + ", ".join(c for c in NEARBY_CATEGORIES if c not in OFFLINE_CATEGORIES),
    ),
    cacheable=False,
    describe=describe,
    arguments_schema=arguments_schema,
    check=check,
    answers_places=True,
)
