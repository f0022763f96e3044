"""What the tools' arguments share: the base model, coordinates, a ZIP, an area or a
circle, a point, a box. Each tool's own arguments are in its folder
(`app.geodata.tools.<tool>.schemas`); the shared parts of results: `app.geodata.results`.

Arguments are snake_case and strict: unknown fields, JSON strings where numbers belong,
NaN, Infinity and out-of-range values are rejected. ZIP codes take the forms agents send
(a JSON number, ZIP+4 with or without the hyphen) where only one reading exists, and
suggest the ZIP when a leading zero looks lost.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from app.geodata import shape_rules
from app.geodata.shape_rules import MAX_POLYGON_VERTICES

# --- shared argument types ---------------------------------------------------------------------

Latitude = Annotated[
    float,
    Field(strict=True, ge=-90, le=90, allow_inf_nan=False, description="Latitude"),
]
Longitude = Annotated[
    float,
    Field(strict=True, ge=-180, le=180, allow_inf_nan=False, description="Longitude"),
]
CountryCode = Annotated[
    str,
    StringConstraints(strict=True, strip_whitespace=True, to_upper=True, pattern=r"^[A-Za-z]{2}$"),
    Field(description="ISO 3166-1 alpha-2 country code, e.g. US, FR"),
]

# ZIP, ZIP+4 with a hyphen, a space or nothing between. ASCII only: \d matches "１２３４５"
_ZIP = re.compile(r"^([0-9]{5})(?:[- ]?[0-9]{4})?$")
_LOST_ZEROS = re.compile(r"^[0-9]{3,4}$|^[0-9]{7,8}$")  # a spreadsheet's "02139", "021391234"


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


AREA_EXAMPLES = "'Texas', 'TX', 'Travis County, Texas', '48453', 'Vietnam', 'Lyon, France'"


# a ring study's circle: 1 m up to 100 km (providers/embedded/rings.py answers it)
MAX_RADIUS_M = 100_000


class Circle(Arguments):
    lat: Latitude
    lon: Longitude
    radius_m: float = Field(strict=True, ge=1, le=MAX_RADIUS_M, allow_inf_nan=False)


AROUND = Field(None, description="Or: a circle {lat, lon, radius_m}, 1 m-100 km")
# listed compactly (tools/list is context an agent pays for): the model checks the rest
CircleArgument = Annotated[
    Circle | None,
    WithJsonSchema({"type": "object", "required": ["lat", "lon", "radius_m"]}),
]


LonLat = Annotated[tuple[Longitude, Latitude], Field(description="[lon, lat]")]


class Shape(Arguments):
    """`within`: a bbox [west, south, east, north] or a polygon of [lon, lat] vertices;
    the rules (shape_rules.py) refuse by name."""

    bbox: tuple[Longitude, Latitude, Longitude, Latitude] | None = None
    # a longer list is refused by the rule (named), a much longer one unread
    polygon: list[LonLat] | None = Field(None, min_length=3, max_length=4 * MAX_POLYGON_VERTICES)

    @model_validator(mode="after")
    def _one_valid_shape(self) -> Shape:
        if (self.bbox is None) == (self.polygon is None):
            raise ValueError("give exactly one of bbox [west, south, east, north] and polygon")
        if self.bbox is not None:
            problem = shape_rules.bbox_problem(*self.bbox)
        else:
            problem = shape_rules.polygon_problem([(lon, lat) for lon, lat in self.polygon or []])
        if problem:
            raise ValueError(problem)
        return self

    @property
    def vertices(self) -> list[tuple[float, float]]:
        """The outline, [lon, lat] each, not closed."""
        if self.bbox is not None:
            west, south, east, north = self.bbox
            return [(west, south), (east, south), (east, north), (west, north)]
        ring = [(lon, lat) for lon, lat in self.polygon or []]
        return ring[:-1] if ring[0] == ring[-1] else ring


WITHIN = Field(None, description="Or: {bbox: [w,s,e,n]} or {polygon: [[lon,lat],...]} (<=500)")
ShapeArgument = Annotated[Shape | None, WithJsonSchema({"type": "object"})]


class ZipArguments(Arguments):
    """A US ZIP code, a named area or a circle: exactly one of `postal_code`, `area` and
    `around` (each of the three demographic tools answers circles)."""

    postal_code: Annotated[str | None, WithJsonSchema({"type": "string", "maxLength": 16})] = Field(
        None,
        strict=True,
        max_length=16,
        description='US ZIP code "94103" (a string; ZIP+4 ok)',
    )
    area: Annotated[str | None, WithJsonSchema({"type": "string", "maxLength": 128})] = Field(
        None,
        strict=True,
        min_length=1,
        max_length=128,
        description="Or: US state, county, country or city",
    )
    around: CircleArgument = AROUND
    within: ShapeArgument = WITHIN
    # accepted (older clients send it), not listed: an area may be in any country
    country: SkipJsonSchema[Literal["US"]] = "US"

    @field_validator("postal_code", mode="before")
    @classmethod
    def _from_a_number(cls, value: object) -> object:
        """A JSON number is read as the digits it spells (94103 is "94103")."""
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return str(value)
        return value

    @field_validator("postal_code", mode="after")
    @classmethod
    def _five_digits(cls, value: str | None) -> str | None:
        if value is None:
            return None
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

    @field_validator("area", mode="after")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = " ".join(value.split())
        if not value:
            raise ValueError("must not be blank")
        if any(ord(ch) < 32 for ch in value):
            raise ValueError("must not contain control characters")
        return value

    @field_validator("country", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _exactly_one(self) -> ZipArguments:
        given = [self.postal_code, self.area, self.around, self.within]
        if sum(value is not None for value in given) != 1:
            raise ValueError(
                "give exactly one of postal_code (a US ZIP code), area (a state, county, "
                f"country or city, e.g. {AREA_EXAMPLES}), around (a circle: lat, lon, "
                "radius_m) and within (a bbox or polygon)"
            )
        return self


class PointArgs(Arguments):
    lat: Latitude
    lon: Longitude


class LatLon(Arguments):
    lat: Latitude
    lon: Longitude


# a box's sides: their names say what they are (WGS84 degrees)
_Lon = Annotated[
    float, Field(strict=True, ge=-180, le=180, allow_inf_nan=False, description="Degrees")
]
_Lat = Annotated[
    float, Field(strict=True, ge=-90, le=90, allow_inf_nan=False, description="Degrees")
]


class BBox(Arguments):
    west: _Lon
    south: _Lat
    east: _Lon
    north: _Lat

    @model_validator(mode="after")
    def _ordered(self) -> BBox:
        if self.south >= self.north:
            raise ValueError("south must be less than north")
        if self.west == self.east:
            raise ValueError("west and east must differ (west > east crosses the antimeridian)")
        return self
