"""static_map's arguments and result models."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import Field, WithJsonSchema, field_validator, model_validator

from app.geodata.results import DATASET, SOURCE, ImageResult
from app.geodata.schemas import Arguments, BBox, Latitude, LatLon, Longitude
from app.kit.validation import plain_text

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


class Marker(Arguments):
    lat: Latitude
    lon: Longitude
    # The map font (DejaVu Sans where installed: the image has it) has Latin, Greek and
    # Cyrillic, no CJK; characters it lacks are left out, with a warning
    # (app.geodata.tools.static_map.maps).
    label: str | None = Field(
        None,
        strict=True,
        max_length=32,
        description="Text beside it: Latin, Greek, Cyrillic (no CJK)",
    )
    color: str = Field(
        "red",
        strict=True,
        max_length=16,
        validate_default=True,  # the default too is drawn in the palette's red
        description="#RRGGBB or " + ", ".join(NAMED_COLORS),
    )

    @field_validator("color", mode="after")
    @classmethod
    def _color(cls, value: str) -> str:
        return color(value)

    @field_validator("label", mode="after")
    @classmethod
    def _plain_label(cls, value: str | None) -> str | None:
        return None if value is None else plain_text(value)  # drawn on the map as it is


def color(value: str) -> str:
    """#rrggbb of a colour given as #RRGGBB or by name."""
    value = value.strip().lower()
    if value in NAMED_COLORS:
        return NAMED_COLORS[value]
    if _COLOR.match(value):
        return value
    raise ValueError("must be #RRGGBB or one of " + ", ".join(NAMED_COLORS))


# The embedded basemap has country and state borders and place labels, no streets: past a
# town-sized view it would draw markers on an empty background.
MAX_MAP_ZOOM = 12


MAX_PATH_POINTS = 500


MAX_PATH_WIDTH = 12


ChoroplethLevel = Literal["country", "state", "county", "zip"]


class Choropleth(Arguments):
    measure: str = Field(strict=True, min_length=1, max_length=48)
    level: ChoroplethLevel


# listed compactly (tools/list's budget): the model still checks lengths and extra fields
_CHOROPLETH_SCHEMA = {
    "type": "object",
    "properties": {
        "measure": {"type": "string"},
        "level": {"enum": list(get_args(ChoroplethLevel))},
    },
    "required": ["measure", "level"],
}


_BBOX_SCHEMA = {
    "type": "object",
    "properties": {side: {"type": "number"} for side in ("west", "south", "east", "north")},
    "required": ["west", "south", "east", "north"],
}


class StaticMapArgs(Arguments):
    center: LatLon | None = Field(None, description="Fitted if absent")
    zoom: int | None = Field(
        None,
        strict=True,
        ge=0,
        le=MAX_MAP_ZOOM,
        description="Fitted if absent",
    )
    bbox: Annotated[BBox | None, WithJsonSchema(_BBOX_SCHEMA)] = Field(
        None, description="Area to show"
    )
    markers: list[Marker] = Field(default_factory=list, max_length=50, description="Points to mark")
    path: list[LatLon] = Field(
        default_factory=list,
        max_length=MAX_PATH_POINTS,
        description="Points of a line; in a fit",
    )
    path_color: str = Field(
        "blue", strict=True, max_length=16, validate_default=True, description="#RRGGBB or a name"
    )
    path_width: int = Field(3, strict=True, ge=1, le=MAX_PATH_WIDTH, description="Pixels")
    width: int = Field(600, strict=True, ge=64, le=1280, description="Pixels")
    height: int = Field(400, strict=True, ge=64, le=1280, description="Pixels")
    choropleth: Annotated[Choropleth | None, WithJsonSchema(_CHOROPLETH_SCHEMA)] = Field(
        None,
        description="Areas by quintile: population, population_density; zip "
        "(zoom 8+) also median_household_income, get_demographics' measures",
    )

    @field_validator("path_color", mode="after")
    @classmethod
    def _path_color(cls, value: str) -> str:
        return color(value)

    @field_validator("path", mode="after")
    @classmethod
    def _a_line(cls, value: list[LatLon]) -> list[LatLon]:
        if len(value) == 1:
            raise ValueError("a path needs at least 2 points (a single point: use markers)")
        return value

    @model_validator(mode="after")
    def _something_to_show(self) -> StaticMapArgs:
        if self.center is None and self.bbox is None and not self.markers and not self.path:
            raise ValueError("give center (with zoom), markers, path or bbox")
        return self


class StaticMapResult(ImageResult):
    width: int = Field(description="px")
    height: int = Field(description="px")
    center: LatLon = Field(description="Centre")
    zoom: int = Field(description="Zoom")
    bbox: BBox = Field(description="Area shown")
    markers: int = Field(description="Markers drawn")
    warnings: list[str] = Field(default_factory=list, description="What was not drawn")
    format: Literal["image/png"] = Field("image/png", description="The image's media type")
    bytes: int = Field(description="PNG size")
    attribution: str = Field(description="Credit line")
    choropleth: dict[str, Any] | None = Field(None, description="Legend")
    source: str = SOURCE
    dataset: str = DATASET
