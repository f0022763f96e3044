"""The six tools: their specs, argument validation, and execution on the embedded provider.

Thin edges (MCP tools, Celery tasks, the CLI) call `validate_arguments` and `execute`.
The provider loads its indices once per process, lazily under a lock, or eagerly through
`warm_up()`; after that every call reads shared immutable arrays, so `execute` is
thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from app.config import get_settings
from app.errors import InvalidArgument, NotFound
from app.geodata import schemas
from app.geodata.providers.base import GeodataProvider
from app.geodata.providers.embedded import EmbeddedProvider
from app.geodata.providers.upstream import UpstreamProvider
from app.validation import describe_errors

_CREDIT = " Costs 1 credit when it returns data; errors and NOT_FOUND (nothing found) cost nothing."


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    args_model: type[BaseModel]
    result_model: type[BaseModel]


@dataclass(frozen=True)
class ToolResult:
    structured: dict[str, Any]
    png: bytes | None = None


TOOL_SPECS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "get_population",
            "Population by US ZIP code",
            "Resident population of a US ZIP code (5 digits, passed as a JSON string such as "
            '"94103"), with its main city, state and county. The figure is a census count; '
            "`year` and `source` say which census. ZIP codes that only serve PO boxes or a "
            "single organisation have no population: NOT_FOUND." + _CREDIT,
            schemas.PopulationArgs,
            schemas.PopulationResult,
        ),
        ToolSpec(
            "get_average_income",
            "Household income by US ZIP code",
            "Household income of a US ZIP code (5 digits as a JSON string) in US dollars. "
            "`measure` says which statistic it is (e.g. median_household_income: half of "
            "households earn less); `year`, `period` and `source` say which survey. "
            "NOT_FOUND when no estimate is published." + _CREDIT,
            schemas.IncomeArgs,
            schemas.IncomeResult,
        ),
        ToolSpec(
            "geocode",
            "Find places by name",
            "Coordinates (WGS84 degrees) for a place: a US ZIP code, a city ('Austin, TX', "
            "'Paris, France', 'München'), a state or province, a country, or an airport code. "
            "An address resolves to its most precise part that is known, and `kind` says which "
            "(postal_code, city, admin1, country, poi). Results are ranked by match quality then "
            "population, with `confidence` 0-1. `limit` 1-10 (default 5); `country` (ISO "
            "alpha-2) restricts results. NOT_FOUND when nothing matches." + _CREDIT,
            schemas.GeocodeArgs,
            schemas.GeocodeResult,
        ),
        ToolSpec(
            "reverse_geocode",
            "Name the place at a point",
            "The nearest populated place to a latitude/longitude by great-circle distance, "
            "with its country, first- and second-level subdivision (admin1, admin2), the "
            "nearest US ZIP code when in the US, and `distanceKm` from the point. NOT_FOUND "
            "farther than 300 km from any place (open sea)." + _CREDIT,
            schemas.ReverseGeocodeArgs,
            schemas.ReverseGeocodeResult,
        ),
        ToolSpec(
            "search_nearby",
            "Places near a point",
            "Places of one `category` (city, airport or postal_code) within `radius_m` metres "
            "(1-50000, default 5000) of a point, nearest first, with great-circle `distanceM`. "
            "`limit` 1-50 (default 10). NOT_FOUND when none is in range." + _CREDIT,
            schemas.SearchNearbyArgs,
            schemas.SearchNearbyResult,
        ),
        ToolSpec(
            "static_map",
            "Draw a map",
            "A PNG map image (Web Mercator) with place labels and up to 50 markers (optional "
            "label, colour #RRGGBB or a name such as red). Give `center` and `zoom` (0 world - 18 "
            "street), or `markers` and/or `bbox` to fit. `width`/`height` 64-1280 px (default "
            "600x400). Returns the image plus its centre, zoom and bounding box." + _CREDIT,
            schemas.StaticMapArgs,
            schemas.StaticMapResult,
        ),
    )
}


def _spec(name: str) -> ToolSpec:
    spec = TOOL_SPECS.get(name)
    if spec is None:
        raise NotFound(f"Unknown tool {name!r}; tools: {', '.join(TOOL_SPECS)}")
    return spec


def _parse(name: str, arguments: Mapping[str, Any]) -> BaseModel:
    spec = _spec(name)
    if not isinstance(arguments, Mapping):
        raise InvalidArgument("arguments must be a JSON object")
    try:
        return spec.args_model.model_validate(dict(arguments))
    except ValidationError as exc:
        known = spec.args_model.model_fields
        raise InvalidArgument(describe_errors(exc.errors(), known=known)) from None


def validate_arguments(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments checked and normalised (defaults filled in), as a JSON-ready dict."""
    return _parse(name, arguments).model_dump(mode="json")


# --- the provider, loaded once per process ------------------------------------------------------

_lock = threading.Lock()
_provider: EmbeddedProvider | None = None
_upstream: UpstreamProvider | None = None
_data_dir: Path | None = None


def configure(data_dir: Path | None) -> None:
    """Use indices under `data_dir` (None: Settings.data_dir) and the current Settings'
    upstreams from the next call on."""
    global _provider, _upstream, _data_dir
    with _lock:
        _provider, _upstream, _data_dir = None, None, data_dir


def provider() -> EmbeddedProvider:
    global _provider
    current = _provider
    if current is not None:
        return current
    with _lock:
        if _provider is None:
            _provider = EmbeddedProvider.from_data_dir(_data_dir or get_settings().data_dir)
        return _provider


def upstream_provider() -> UpstreamProvider:
    global _upstream
    with _lock:
        if _upstream is None:
            _upstream = UpstreamProvider(get_settings())
        return _upstream


def provider_for(name: str) -> GeodataProvider:
    """The upstream provider for the tools `GEOSVC_UPSTREAM_TOOLS` names, else embedded."""
    if name in get_settings().upstream_tools:
        return upstream_provider()
    return provider()


def warm_up() -> None:
    """Load (building if needed) the indices now rather than on the first call."""
    provider()


_HANDLERS: dict[str, Callable[[GeodataProvider, Any], BaseModel]] = {
    "get_population": lambda p, a: p.get_population(a),
    "get_average_income": lambda p, a: p.get_average_income(a),
    "geocode": lambda p, a: p.geocode(a),
    "reverse_geocode": lambda p, a: p.reverse_geocode(a),
    "search_nearby": lambda p, a: p.search_nearby(a),
}


def execute(name: str, arguments: Mapping[str, Any]) -> ToolResult:
    args = _parse(name, arguments)
    if isinstance(args, schemas.StaticMapArgs):
        image, png = provider().static_map(args)
        return ToolResult(structured=image.model_dump(mode="json", by_alias=True), png=png)
    result = _HANDLERS[name](provider_for(name), args)
    return ToolResult(structured=result.model_dump(mode="json", by_alias=True))
