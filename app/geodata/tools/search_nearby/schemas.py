"""search_nearby's arguments and result models."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from app.geodata.results import (
    AIRPORT_TYPE,
    COUNTRY_CODE,
    DATASET,
    LAT,
    LON,
    NAME,
    POPULATION,
    SOURCE,
    AirportType,
    Result,
)
from app.geodata.schemas import PointArgs

# What search_nearby finds. The first three are answered offline everywhere; the others
# need the upstream provider (Overpass), except where a shipped dataset has them.
NearbyCategory = Literal[
    "city",
    "airport",
    "postal_code",
    "hospital",
    "pharmacy",
    "school",
    "cafe",
    "restaurant",
    "hotel",
    "fuel",
    "parking",
    "police",
    "supermarket",
]


NEARBY_CATEGORIES: tuple[str, ...] = get_args(NearbyCategory)


class SearchNearbyArgs(PointArgs):
    radius_m: float = Field(
        5000,
        strict=True,
        ge=1,
        le=50_000,
        allow_inf_nan=False,
        description="Metres",
    )
    category: NearbyCategory = Field("city", description="What to find")
    limit: int = Field(10, strict=True, ge=1, le=50, description="At most this many results")
    order: Literal["prominence", "distance"] = Field(
        "prominence",
        description="Sort: most prominent first, or nearest first",
    )
    cursor: str | None = Field(
        None,
        strict=True,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="`nextCursor` of the previous page",
    )


class NearbyPlace(Result):
    name: str = NAME
    category: str = Field(description="The category searched for")
    lat: float = LAT
    lon: float = LON
    distance_m: float = Field(description="From the query point")
    code: str | None = Field(None, description="IATA/ICAO or postal code")
    country_code: str | None = COUNTRY_CODE
    type: AirportType | None = AIRPORT_TYPE
    scheduled_service: bool | None = Field(None, description="Airports: scheduled airline service")
    population: int | None = POPULATION
    position_precision: str | None = Field(None, description="city: its town's point")


class SearchNearbyResult(Result):
    category: str = Field(description="The category searched for")
    radius_m: float = Field(description="The search radius")
    order: Literal["prominence", "distance"] = Field(
        "distance", description="How `results` are sorted"
    )
    results: list[NearbyPlace] = Field(description="This page, sorted by `order`")
    total: int | None = Field(None, description="How many in range, when known")
    truncated: bool = Field(False, description="More follow (nextCursor)")
    next_cursor: str | None = Field(None, description="Pass as `cursor` for the next page")
    source: str = SOURCE
    dataset: str = DATASET
