"""A tool's arguments from a query string: each parameter named as the argument, its text
read as the argument's JSON type (the catalogue's strict models then check it exactly as
they check an MCP call's JSON). A list (`topics`) is the parameter repeated, as OpenAPI's
default form has it (`topics=age&topics=housing`), or one comma-separated value.

Structured arguments take compact forms:

- `around=LAT,LON,RADIUS_M` (the demographic tools: a circle, e.g.
  `around=40.71,-74.0,5000`)
- `within=WEST,SOUTH,EAST,NORTH` (the demographic tools: a bbox) or
  `within=LON,LAT|LON,LAT|...` (a polygon, GeoJSON's order, at least 3 vertices), e.g.
  `within=-105.05,39.7,-104.95,39.8`; at most MAX_PATH_QUERY_CHARS characters (a polygon
  of up to 500 vertices fits in a POST to the tool's /batch).
- `center=LAT,LON` (e.g. `center=40.71,-74.0`)
- `bbox=WEST,SOUTH,EAST,NORTH` (e.g. `bbox=-74.3,40.5,-73.7,40.9`)
- `markers=LAT,LON[,COLOR[,LABEL]]`, repeated for each marker (e.g.
  `markers=40.71,-74.0,red,Office&markers=40.75,-73.99`); COLOR is a name or `#RRGGBB`
  (`%23RRGGBB` in a URL); LABEL is the rest of the value, commas included.
- `choropleth=MEASURE,LEVEL` (static_map, e.g. `choropleth=population_density,state`)
- `path=LAT,LON|LAT,LON|...`, the points in order, once (e.g.
  `path=40.71,-74.0|40.75,-73.99|40.78,-73.97`); `path_color` and `path_width` are plain
  parameters. At most MAX_PATH_QUERY_CHARS characters (about 300 points at five
  decimals), inside the URL's 8 KiB; the tool's own limit (500) over MCP.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from starlette.datastructures import QueryParams

from app.geodata.catalogue import spec_for
from app.geodata.tools.static_map.schemas import MAX_PATH_POINTS
from app.kit.errors import InvalidArgument

_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
# What float() takes besides this ("4_8.8", Arabic-Indic digits, "nan", "inf") is no
# number of ours: left as text, which the strict model refuses by name.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
MARKERS_FORM = "LAT,LON[,COLOR[,LABEL]]"
WITHIN_FORM = "WEST,SOUTH,EAST,NORTH (a bbox) or LON,LAT|LON,LAT|... (a polygon)"
PATH_FORM = "LAT,LON|LAT,LON|..."
# Well inside the URL's 8 KiB (GEOSVC_HTTP_MAX_URL_BYTES) beside the other parameters, so a
# longer path is a 400 of ours, not the server's 414 (an encoded "," or "|" takes 3 bytes).
MAX_PATH_QUERY_CHARS = 6000
COMPACT_FORMS = {
    "center": ("lat", "lon"),
    "bbox": ("west", "south", "east", "north"),
    "around": ("lat", "lon", "radius_m"),
}


@cache
def _argument_types(tool: str) -> Mapping[str, str]:
    """Each argument's JSON type: "number", "integer", "string" or "object"/"array"."""
    properties = spec_for(tool).args_model.model_json_schema()["properties"]
    types: dict[str, str] = {}
    for name, schema in properties.items():
        options = schema.get("anyOf", [schema])
        named = [o.get("type") for o in options if o.get("type") not in (None, "null")]
        types[name] = str(named[0]) if named else "object"
    return types


def query_arguments(tool: str, query: QueryParams) -> dict[str, Any]:
    """The arguments of a call of `tool` from `query`; InvalidArgument for an unknown or
    repeated parameter or a compact form that does not parse."""
    types = _argument_types(tool)
    arguments: dict[str, Any] = {}
    for name in query:
        values = query.getlist(name)
        if name not in types:
            known = ", ".join(types)
            raise InvalidArgument(f"{name}: is not a known parameter (known: {known})")
        if name == "markers":
            arguments[name] = [_marker(value) for value in values]
            continue
        if len(values) > 1:
            if types[name] != "array" or name == "path":  # a path is given once, with |
                raise InvalidArgument(f"{name}: give it once")
            arguments[name] = values  # `topics=age&topics=housing`
            continue
        if name == "within":
            arguments[name] = _shape(values[0])
            continue
        if name == "choropleth":
            arguments[name] = _choropleth(values[0])
            continue
        if name == "path":
            if len(values[0]) > MAX_PATH_QUERY_CHARS:
                raise InvalidArgument(f"path: at most {MAX_PATH_QUERY_CHARS:,} characters")
            arguments[name] = [_point(value) for value in values[0].split("|")]
            continue
        arguments[name] = _read(name, values[0], types[name])
    return arguments


def _read(name: str, text: str, kind: str) -> Any:
    if name in COMPACT_FORMS:
        return _compact(name, text, COMPACT_FORMS[name])
    if kind == "number":
        return _number(text)
    if kind == "integer":
        return int(text) if _INTEGER.fullmatch(text) else text
    return text


def _number(text: str) -> float | str:
    """The number `text` spells; else the text, which the strict model then refuses by
    name ("must be a number")."""
    return float(text) if _NUMBER.fullmatch(text.strip()) else text


def _compact(name: str, text: str, parts: tuple[str, ...]) -> dict[str, Any]:
    values = text.split(",")
    numbers = [_number(value.strip()) for value in values]
    if len(values) != len(parts) or any(isinstance(n, str) for n in numbers):
        form = ",".join(part.upper() for part in parts)
        raise InvalidArgument(f"{name}: must be {form} (numbers, comma-separated)")
    return dict(zip(parts, numbers, strict=True))


def _marker(text: str) -> dict[str, Any]:
    values = text.split(",", 3)
    lat, lon = (_number(v.strip()) for v in (values + ["", ""])[:2])
    if isinstance(lat, str) or isinstance(lon, str):
        raise InvalidArgument(f"markers: each must be {MARKERS_FORM}, e.g. 40.71,-74.0,red,Office")
    marker: dict[str, Any] = {"lat": lat, "lon": lon}
    if len(values) > 2 and values[2].strip():
        marker["color"] = values[2].strip()
    if len(values) > 3:
        marker["label"] = values[3]
    return marker


def _shape(text: str) -> dict[str, Any]:
    """`within`: a bbox, or a polygon when the text has vertices separated by |."""
    if len(text) > MAX_PATH_QUERY_CHARS:
        raise InvalidArgument(f"within: at most {MAX_PATH_QUERY_CHARS:,} characters")
    parts = [[_number(v.strip()) for v in vertex.split(",")] for vertex in text.split("|")]
    numbers = all(not isinstance(n, str) for part in parts for n in part)
    if numbers and len(parts) == 1 and len(parts[0]) == 4:
        return {"bbox": parts[0]}
    if numbers and len(parts) >= 3 and all(len(part) == 2 for part in parts):
        return {"polygon": parts}
    raise InvalidArgument(f"within: must be {WITHIN_FORM}, e.g. -105.05,39.7,-104.95,39.8")


def _choropleth(text: str) -> dict[str, Any]:
    parts = [part.strip() for part in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise InvalidArgument("choropleth: must be MEASURE,LEVEL, e.g. population_density,state")
    return {"measure": parts[0], "level": parts[1]}


def _point(text: str) -> dict[str, Any]:
    values = [_number(v.strip()) for v in text.split(",")]
    if len(values) != 2 or isinstance(values[0], str) or isinstance(values[1], str):
        raise InvalidArgument(f"path: must be {PATH_FORM}, e.g. 40.71,-74.0|40.75,-73.99")
    return {"lat": values[0], "lon": values[1]}


# The compact forms as OpenAPI query parameters (app/v1/openapi.py lists them).
COMPACT_PARAMETERS: dict[str, dict[str, Any]] = {
    "center": {
        "description": "Map centre as LAT,LON (e.g. 40.71,-74.0); fitted to markers/path/bbox "
        "if absent",
        "schema": {"type": "string", "pattern": r"^\s*-?[0-9.]+\s*,\s*-?[0-9.]+\s*$"},
    },
    "around": {
        "description": "Or: a circle as LAT,LON,RADIUS_M (e.g. 40.71,-74.0,5000; 1 m to 100 km)",
        "schema": {"type": "string", "pattern": r"^(\s*-?[0-9.]+\s*,){2}\s*-?[0-9.]+\s*$"},
    },
    "within": {
        "description": f"Or: a shape as {WITHIN_FORM} (up to 500 vertices; the shape within "
        "100 km of its centre)",
        "schema": {"type": "string", "maxLength": MAX_PATH_QUERY_CHARS},
    },
    "bbox": {
        "description": "Area to show as WEST,SOUTH,EAST,NORTH (degrees)",
        "schema": {"type": "string", "pattern": r"^(\s*-?[0-9.]+\s*,){3}\s*-?[0-9.]+\s*$"},
    },
    "markers": {
        "description": f"A marker as {MARKERS_FORM}, the parameter repeated per marker (up to "
        "50); COLOR a name (red, blue, ...) or %23RRGGBB; LABEL the rest, commas included",
        "schema": {"type": "array", "maxItems": 50, "items": {"type": "string"}},
        "style": "form",
        "explode": True,
    },
    "choropleth": {
        "description": "Areas coloured by quintile of a measure, as MEASURE,LEVEL (e.g. "
        "population_density,state): measures population, population_density at level "
        "country, state, county or zip; at level zip (zoom 8 or more) also "
        "median_household_income and get_demographics' measures",
        "schema": {"type": "string", "maxLength": 80, "pattern": r"^[^,]+,[^,]+$"},
    },
    "path": {
        "description": f"A line through the points in order, as {PATH_FORM} (at least 2, up "
        f"to {MAX_PATH_POINTS}, at most {MAX_PATH_QUERY_CHARS:,} characters); drawn the short "
        "way across the antimeridian; included in a fit",
        "schema": {
            "type": "string",
            "maxLength": MAX_PATH_QUERY_CHARS,
            # The first point ungrouped: the same strings, but schemathesis's coverage phase
            # spent 30-90 s on the grouped form under this maxLength (the contract test).
            "pattern": r"^\s*-?[0-9.]+\s*,\s*-?[0-9.]+\s*(\|\s*-?[0-9.]+\s*,\s*-?[0-9.]+\s*)+$",
        },
    },
}
