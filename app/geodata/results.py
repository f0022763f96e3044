"""What the tools answer: camelCase JSON (`model_dump(by_alias=True)`), every field
described and titled for agents, and always `source`, where the data came from."""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, WithJsonSchema
from pydantic.alias_generators import to_camel

from app.geodata.schemas import BBox, LatLon

_UNITS = {"m": "metres", "km": "km", "s": "seconds"}
_TITLES = {"lat": "Latitude", "lon": "Longitude", "bbox": "Bounding box"}


def field_title(name: str, _info: object) -> str:
    """A clean title from the field name: "postal_code" -> "Postal code",
    "distance_km" -> "Distance (km)" (pydantic's default from a camelCase alias
    would say "Postalcode")."""
    if name in _TITLES:
        return _TITLES[name]
    words = name.split("_")
    unit = _UNITS.get(words[-1]) if len(words) > 1 else None
    if unit:
        words = words[:-1]
    title = " ".join(words).capitalize()
    return f"{title} ({unit})" if unit else title


class Result(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        field_title_generator=field_title,
    )


SOURCE = Field(description="Credit to show")
DATASET = Field(description="Data release")
ZIP_ECHO = Field(None, description="The ZIP code; null for an area")
AREA_NAME = Field(None, description="The area matched")
AREA_ID = Field(None, description="US-TX, county FIPS, ISO country, city label")
AREA_COUNTRY = Field("US", description="ISO 3166-1 alpha-2 country code")
MOE = Field(None, description="90% margin of error, where given")
# a circle's (`around`) answer: how it was estimated, and how far off such answers run
METHOD = Field(None, description="Circle: how estimated")
WARNINGS: list[str] = Field(default_factory=list, description="Read them")

AreaLevel = Literal["postal_code", "city", "county", "state", "country", "circle", "shape"]


def area_candidate(level: str, name: str, area_id: str) -> dict[str, str]:
    """One entry of `candidates`: another area the name could mean."""
    return {"level": level, "name": name, "areaId": area_id}


CANDIDATES: list[dict[str, str]] = Field(
    default_factory=list,
    description="Other areas it may mean: {level, name, areaId}",
)


class PopulationResult(Result):
    postal_code: str | None = ZIP_ECHO
    level: AreaLevel = Field("postal_code", description="What the figure covers")
    name: str | None = AREA_NAME
    area_id: str | None = AREA_ID
    country_code: str | None = AREA_COUNTRY
    population: int = Field(description="Residents counted in the area")
    margin_of_error: int | None = MOE
    measure: Literal["total_population"] = Field(
        "total_population", description="What `population` counts"
    )
    year: int | None = Field(description="Year of the count or survey end; null: not stated")
    place_name: str | None = Field(None, description="The ZIP's main city")
    state: str | None = Field(None, description="US state code")
    county: str | None = Field(None, description="The ZIP's county")
    candidates: list[dict[str, str]] = CANDIDATES
    method: str | None = METHOD
    warnings: list[str] = WARNINGS
    source: str = SOURCE
    dataset: str = DATASET


class IncomeResult(Result):
    postal_code: str | None = ZIP_ECHO
    level: AreaLevel = Field("postal_code", description="What the figure covers")
    name: str | None = AREA_NAME
    area_id: str | None = AREA_ID
    country_code: str | None = AREA_COUNTRY
    amount: int = Field(description="Household income in `currency` per year")
    margin_of_error: int | None = MOE
    currency: Literal["USD"] = Field("USD", description="Currency of `amount`")
    measure: Literal[
        "median_household_income",
        "mean_household_income",
        "household_weighted_mean_of_zip_medians",
    ] = Field(description="Which statistic `amount` is")
    year: int = Field(description="Last year of the survey period")
    period: str | None = Field(None, description='Survey period, e.g. "2020-2024"')
    lower_bound: bool = Field(
        False,
        description="Top-coded (e.g. 250,000+): the median is at least `amount`",
    )
    candidates: list[dict[str, str]] = CANDIDATES
    method: str | None = METHOD
    warnings: list[str] = WARNINGS
    source: str = SOURCE
    dataset: str = DATASET


class Measure(Result):
    topic: str = Field(description="e.g. age")
    name: str = Field(description="e.g. median_age")
    # a count stays an integer in JSON; "number" admits both
    value: Annotated[int | float | None, WithJsonSchema({"type": ["number", "null"]})] = Field(
        description="null if unpublished"
    )
    unit: Literal["count", "percent", "dollars", "years", "minutes", "persons"] = Field(
        description="Of `value`"
    )
    lower_bound: bool = Field(False, description="Top-coded: at least `value`")
    margin_of_error: float | None = Field(None, description="90% MOE, if published")
    of: str = Field(description="Whom it counts")


class DemographicsResult(Result):
    postal_code: str | None = ZIP_ECHO
    level: AreaLevel = Field("postal_code", description="What they cover")
    name: str | None = AREA_NAME
    area_id: str | None = AREA_ID
    country_code: Literal["US"] = Field("US", description="US")
    place_name: str | None = Field(None, description="Main city")
    state: str | None = Field(None, description="State code")
    measures: list[Measure] = Field(description="Figures")
    year: int = Field(description="Survey end")
    period: str = Field(description='e.g. "2019-2023"')
    source: str = SOURCE
    dataset: str = DATASET
    warnings: list[str] = Field(default_factory=list, description="Unpublished figures")


Kind = Literal["postal_code", "city", "admin1", "country", "address", "poi"]
KIND = Field(description="admin1: state or province; poi: landmark")
NAME = Field(description="The place's name")
LABEL = Field(description="Name, region and country")
LAT = Field(description="Latitude")
LON = Field(description="Longitude")
COUNTRY_CODE = Field(None, description="ISO 3166-1 alpha-2")
ADMIN1 = Field(None, description="State, province or region")
AirportType = Literal[
    "large_airport",
    "medium_airport",
    "small_airport",
    "heliport",
    "seaplane_base",
    "balloonport",
    "closed",
]
AIRPORT_TYPE = Field(None, description="Airports: size class")
POPULATION = Field(None, description="Residents (GeoNames)")


class GeocodeMatch(Result):
    name: str = NAME
    label: str = LABEL
    lat: float = LAT
    lon: float = LON
    kind: Kind = KIND
    country_code: str | None = COUNTRY_CODE
    admin1: str | None = ADMIN1
    postal_code: str | None = Field(None, description="ZIP code, when the place is one")
    population: int | None = POPULATION
    type: AirportType | None = AIRPORT_TYPE
    confidence: float = Field(
        ge=0, le=1, description="How well the place matches the query, 0 to 1"
    )
    matched: str | None = Field(
        None,
        description="The part of the query matched",
    )


class GeocodeCandidate(Result):
    # one of the places an ambiguous name fits; fields as in `results`

    name: str = NAME
    label: str = LABEL
    kind: Kind = KIND
    country_code: str | None = COUNTRY_CODE
    admin1: str | None = ADMIN1
    lat: float = LAT
    lon: float = LON
    confidence: float = Field(ge=0, le=1, description="As in `results`")

    @classmethod
    def of(cls, match: GeocodeMatch) -> GeocodeCandidate:
        return cls.model_validate(match.model_dump(include=set(cls.model_fields)))


class GeocodeResult(Result):
    query: str = Field(description="The query as received")
    results: list[GeocodeMatch] = Field(description="Matches, best first")
    ambiguous: bool = Field(
        False,
        description="Well-known places far apart fit the name: ask which is meant, or say "
        "which you chose",
    )
    candidates: list[GeocodeCandidate] = Field(
        default_factory=list,
        description="When `ambiguous`: the competing places, best first (up to 5)",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="What the results are not",
    )
    source: str = SOURCE
    dataset: str = DATASET


# where postal codes are US ZIP codes: the US and its territories
ZIP_COUNTRIES = frozenset({"US", "PR", "VI", "GU", "AS", "MP"})


class NearestPostalCode(Result):
    code: str = Field(description="Postal code (US: ZIP)")
    distance_m: float = Field(description="To its centre")
    no_residents: bool = Field(False, description="US: PO box/building ZIP")


class ReverseGeocodeResult(Result):
    name: str = NAME
    label: str = LABEL
    kind: Kind = KIND
    lat: float = Field(description="The place's centre")
    lon: float = LON
    country_code: str | None = Field(None, description="The point's, ISO alpha-2")
    country: str | None = Field(None, description="The point's country")
    admin1: str | None = ADMIN1
    admin2: str | None = Field(None, description="County or district")
    county_fips: str | None = Field(None, description="US county FIPS")
    postal_code: str | None = Field(None, description="US ZIP whose area holds the point")
    postal_code_basis: str | None = Field(
        None,
        description="containment, address, estimate or nearest_centre",
    )
    nearest_postal_code: NearestPostalCode | None = Field(None, description="First candidate")
    postal_code_candidates: list[NearestPostalCode] = Field(
        default_factory=list,
        description="Not areas; US: likeliest first",
    )
    postal_code_uncertain: bool | None = Field(None, description="First may be wrong")
    warnings: list[str] = Field(default_factory=list, description="What it cannot be sure of")
    distance_km: float = Field(description="To the place's centre")
    at_sea: bool = Field(
        False,
        description="Past 22 km of land: no country or admin",
    )
    on_water: bool = Field(
        False,
        description="On a lake or sea (atSea too)",
    )
    water: Literal["lake", "sea"] | None = Field(None, description="When onWater")
    nearest_only: bool = Field(
        False,
        description="Not in the place, only nearest it",
    )
    source: str = SOURCE
    dataset: str = DATASET


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


class ImageResult(Result):
    """A result that comes with an image, carried beside the JSON fields."""

    _png: bytes = PrivateAttr(b"")

    def with_png(self, png: bytes) -> Self:
        self._png = png
        return self

    @property
    def png(self) -> bytes:
        return self._png


class StaticMapResult(ImageResult):
    width: int = Field(description="Pixels")
    height: int = Field(description="Pixels")
    center: LatLon = Field(description="The map's centre")
    zoom: int = Field(description="Web Mercator zoom level")
    bbox: BBox = Field(description="The area the image shows")
    markers: int = Field(description="How many markers were drawn")
    warnings: list[str] = Field(default_factory=list, description="What was not drawn")
    format: Literal["image/png"] = Field("image/png", description="The image's media type")
    bytes: int = Field(description="Size of the PNG image")
    attribution: str = Field(description="Credit line to show with the map")
    source: str = SOURCE
    dataset: str = DATASET
