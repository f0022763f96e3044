"""Arguments and results of the six tools.

Arguments are snake_case and strict: unknown fields, JSON strings where numbers belong,
NaN, Infinity and out-of-range values are rejected. ZIP codes take the forms agents send
(a JSON number, ZIP+4 with or without the hyphen) where only one reading exists, and
suggest the ZIP when a leading zero looks lost. Results use camelCase JSON names
(`model_dump(by_alias=True)`) and always say where their data came from in `source`.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Self, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

# --- shared argument types ---------------------------------------------------------------------

Latitude = Annotated[
    float,
    Field(strict=True, ge=-90, le=90, allow_inf_nan=False, description="Latitude, WGS84 degrees"),
]
Longitude = Annotated[
    float,
    Field(
        strict=True, ge=-180, le=180, allow_inf_nan=False, description="Longitude, WGS84 degrees"
    ),
]
CountryCode = Annotated[
    str,
    StringConstraints(strict=True, strip_whitespace=True, to_upper=True, pattern=r"^[A-Za-z]{2}$"),
    Field(description="ISO 3166-1 alpha-2 country code, e.g. US, FR"),
]

# ZIP, ZIP+4 with a hyphen, a space or nothing between. ASCII only: \d matches "１２３４５"
_ZIP = re.compile(r"^([0-9]{5})(?:[- ]?[0-9]{4})?$")
_LOST_ZEROS = re.compile(r"^[0-9]{3,4}$|^[0-9]{7,8}$")  # a spreadsheet's "02139", "021391234"
_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
NAMED_COLORS = {
    "red": "#d7263d",
    "blue": "#1b4f9c",
    "green": "#1e8c45",
    "orange": "#f08a24",
    "purple": "#7b3fa0",
    "black": "#111111",
    "white": "#ffffff",
    "gray": "#6b6b6b",
    "yellow": "#f2c500",
}


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ZipArguments(Arguments):
    postal_code: str = Field(
        strict=True,
        max_length=16,
        description='US ZIP code as a JSON string of 5 digits, e.g. "94103" (ZIP+4 accepted)',
    )
    country: Literal["US"] = Field("US", description="Only US is available")

    @field_validator("postal_code", mode="before")
    @classmethod
    def _from_a_number(cls, value: object) -> object:
        """A JSON number is read as the digits it spells (94103 is "94103")."""
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return str(value)
        return value

    @field_validator("postal_code", mode="after")
    @classmethod
    def _five_digits(cls, value: str) -> str:
        code = value.strip()
        match = _ZIP.match(code)
        if match:
            return match.group(1)
        if _LOST_ZEROS.match(code):  # a guess: suggest it, do not answer for another ZIP
            padded = code.zfill(9 if len(code) > 5 else 5)
            guess = f"{padded[:5]}-{padded[5:]}" if len(padded) == 9 else padded
            raise ValueError(
                f'must be a US ZIP code of 5 digits; did you mean "{guess}"? '
                "(leading zeros may have been lost)"
            )
        raise ValueError('must be a US ZIP code of 5 digits such as "94103"')

    @field_validator("country", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value


class PopulationArgs(ZipArguments):
    pass


class IncomeArgs(ZipArguments):
    pass


class GeocodeArgs(Arguments):
    query: str = Field(
        strict=True,
        min_length=1,
        max_length=256,
        description='A place to find: "Austin, TX", "Paris, France", "10001", "Texas", '
        "a country, an airport code, or an address (resolved to its most precise known part)",
    )
    country: CountryCode | None = Field(None, description="Only results in this country")
    limit: int = Field(5, strict=True, ge=1, le=10, description="At most this many results")

    @field_validator("query", mode="after")
    @classmethod
    def _printable(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("must not be blank")
        if any(ord(ch) < 32 for ch in value):
            raise ValueError("must not contain control characters")
        return value


class PointArgs(Arguments):
    lat: Latitude
    lon: Longitude


class ReverseGeocodeArgs(PointArgs):
    pass


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
        description="Search radius in metres, 1 to 50000",
    )
    category: NearbyCategory = Field("city", description="What to find")
    limit: int = Field(10, strict=True, ge=1, le=50, description="At most this many results")
    cursor: str | None = Field(
        None,
        strict=True,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="`nextCursor` of the previous page, to get the next one",
    )


class LatLon(Arguments):
    lat: Latitude
    lon: Longitude


class BBox(Arguments):
    west: Longitude
    south: Latitude
    east: Longitude
    north: Latitude

    @model_validator(mode="after")
    def _ordered(self) -> BBox:
        if self.south >= self.north:
            raise ValueError("south must be less than north")
        if self.west == self.east:
            raise ValueError("west and east must differ (west > east crosses the antimeridian)")
        return self


class Marker(Arguments):
    lat: Latitude
    lon: Longitude
    label: str | None = Field(None, strict=True, max_length=32, description="Short text beside it")
    color: str = Field(
        "red",
        strict=True,
        max_length=16,
        description="#RRGGBB or one of " + ", ".join(NAMED_COLORS),
    )

    @field_validator("color", mode="after")
    @classmethod
    def _color(cls, value: str) -> str:
        value = value.strip().lower()
        if value in NAMED_COLORS:
            return NAMED_COLORS[value]
        if _COLOR.match(value):
            return value
        raise ValueError("must be #RRGGBB or one of " + ", ".join(NAMED_COLORS))


class StaticMapArgs(Arguments):
    center: LatLon | None = Field(None, description="Map centre; fitted to markers/bbox if absent")
    zoom: int | None = Field(
        None, strict=True, ge=0, le=18, description="0 (world) to 18; fitted if absent"
    )
    bbox: BBox | None = Field(None, description="Area to show (west, south, east, north)")
    markers: list[Marker] = Field(default_factory=list, max_length=50)
    width: int = Field(600, strict=True, ge=64, le=1280, description="Pixels")
    height: int = Field(400, strict=True, ge=64, le=1280, description="Pixels")

    @model_validator(mode="after")
    def _something_to_show(self) -> StaticMapArgs:
        if self.center is None and self.bbox is None and not self.markers:
            raise ValueError("give center (with zoom), markers or bbox")
        return self


# --- results -----------------------------------------------------------------------------------


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


SOURCE = Field(description="Dataset or provider and vintage this answer comes from")
ZIP_ECHO = Field(description="The ZIP code answered for (5 digits)")


class PopulationResult(Result):
    postal_code: str = ZIP_ECHO
    country_code: Literal["US"] = Field("US", description="Always US: ZIP data is US-only")
    population: int = Field(description="Residents counted in the ZIP code's area")
    measure: Literal["total_population"] = Field(
        "total_population", description="What `population` counts"
    )
    year: int = Field(description="Year of the count, or last year of the survey period")
    place_name: str | None = Field(None, description="Main city of the ZIP code")
    state: str | None = Field(None, description="US state code")
    county: str | None = Field(None, description="County of the ZIP code's main city")
    source: str = SOURCE


class IncomeResult(Result):
    postal_code: str = ZIP_ECHO
    country_code: Literal["US"] = Field("US", description="Always US: ZIP data is US-only")
    amount: int = Field(description="Household income in `currency` per year")
    currency: Literal["USD"] = Field("USD", description="Currency of `amount`")
    measure: Literal["median_household_income", "mean_household_income"] = Field(
        description="Which statistic `amount` is"
    )
    year: int = Field(description="Last year of the survey period")
    period: str | None = Field(None, description='Survey period, e.g. "2020-2024"')
    lower_bound: bool = Field(
        False,
        description="True when the survey publishes only 'amount or more' (top-coded, "
        "e.g. 250,000+): the true median is at least `amount`",
    )
    source: str = SOURCE


Kind = Literal["postal_code", "city", "admin1", "country", "address", "poi"]
KIND = Field(
    description="What the place is: a ZIP code, a city or town, a first-level region "
    "(state, province), a country, a street address or a point of interest"
)
NAME = Field(description="The place's name")
LABEL = Field(description="Name with its region and country, for display")
LAT = Field(description="Latitude of the place, WGS84 degrees")
LON = Field(description="Longitude of the place, WGS84 degrees")
COUNTRY_CODE = Field(None, description="ISO 3166-1 alpha-2 country code")
ADMIN1 = Field(None, description="First-level subdivision (state, province, region)")


class GeocodeMatch(Result):
    name: str = NAME
    label: str = LABEL
    lat: float = LAT
    lon: float = LON
    kind: Kind = KIND
    country_code: str | None = COUNTRY_CODE
    admin1: str | None = ADMIN1
    postal_code: str | None = Field(None, description="ZIP code, when the place is one")
    confidence: float = Field(
        ge=0, le=1, description="How well the place matches the query, 0 to 1"
    )
    matched: str | None = Field(
        None,
        description="The part of the query this result matches; shorter than the query "
        "when only a less precise part (e.g. the town of an address) was found",
    )


class GeocodeResult(Result):
    query: str = Field(description="The query as received")
    results: list[GeocodeMatch] = Field(description="Matches, best first")
    source: str = SOURCE


class ReverseGeocodeResult(Result):
    name: str = NAME
    label: str = LABEL
    kind: Kind = KIND
    lat: float = Field(description="Where the named place is (its centre), WGS84 degrees")
    lon: float = LON
    country_code: str | None = Field(
        None, description="ISO 3166-1 alpha-2 code of the country the point is in"
    )
    country: str | None = Field(None, description="Name of the country the point is in")
    admin1: str | None = ADMIN1
    admin2: str | None = Field(None, description="Second-level subdivision (county, district)")
    postal_code: str | None = Field(None, description="Nearest US ZIP code (US only)")
    distance_km: float = Field(
        description="Great-circle distance from the query point to the place's centre"
    )
    source: str = SOURCE


class NearbyPlace(Result):
    name: str = NAME
    category: str = Field(description="The category searched for")
    lat: float = LAT
    lon: float = LON
    distance_m: float = Field(description="Great-circle distance from the query point")
    code: str | None = Field(None, description="IATA/ICAO code or ZIP code")
    country_code: str | None = COUNTRY_CODE


class SearchNearbyResult(Result):
    category: str = Field(description="The category searched for")
    radius_m: float = Field(description="The search radius")
    results: list[NearbyPlace] = Field(description="This page of places, nearest first")
    total: int | None = Field(None, description="How many are in range, when known")
    truncated: bool = Field(False, description="More results follow (see nextCursor)")
    next_cursor: str | None = Field(None, description="Pass as `cursor` for the next page")
    source: str = SOURCE


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
    width: int = Field(description="Image width in pixels")
    height: int = Field(description="Image height in pixels")
    center: LatLon = Field(description="The map's centre")
    zoom: int = Field(description="Web Mercator zoom level, 0 (world) to 18 (street)")
    bbox: BBox = Field(description="The area the image shows")
    markers: int = Field(description="How many markers were drawn")
    format: Literal["image/png"] = Field("image/png", description="The image's media type")
    bytes: int = Field(description="Size of the PNG image")
    attribution: str = Field(description="Credit line to show with the map")
    source: str = SOURCE
