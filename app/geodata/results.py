"""What the tools' results share: camelCase JSON (`model_dump(by_alias=True)`), every
field described and titled for agents, and always `source`, where the data came from.
Each tool's result model is in its folder (`app.geodata.tools.<tool>.schemas`)."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

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


class ImageResult(Result):
    """A result that comes with an image, carried beside the JSON fields."""

    _png: bytes = PrivateAttr(b"")
    # What the map app reads beside the image (a choropleth's outlines), for the MCP
    # result's `_meta` only: never in the JSON a model or a REST client reads.
    _app_meta: dict[str, Any] = PrivateAttr(default_factory=dict)

    def with_png(self, png: bytes, app_meta: dict[str, Any] | None = None) -> Self:
        self._png = png
        self._app_meta = app_meta or {}
        return self

    @property
    def app_meta(self) -> dict[str, Any]:
        return self._app_meta

    @property
    def png(self) -> bytes:
        return self._png
