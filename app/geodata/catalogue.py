"""The tool catalogue: the tools in order (each one is its folder of `app.geodata.tools`:
spec, summary, example, hooks, models and answers), and argument validation. MCP's tools/list,
the /v1 routes and OpenAPI, the summaries and docs/TOOLS.md are all derived from
`TOOL_SPECS` (docs/CONTRIBUTING.md: a new tool).

Light on purpose: the api process validates arguments through this module without
loading the indices (no numpy, scipy or pyarrow is imported from here).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.util import find_spec
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from app.geodata.batch import BatchForm
from app.geodata.tools import (
    demographics,
    geocode,
    income,
    population,
    reverse_geocode,
    search_nearby,
    static_map,
)
from app.geodata.tools.common import batch_summary
from app.geodata.tools.spec import ToolSpec
from app.kit.config import Settings, ToolPolicy, UpstreamTool, get_settings
from app.kit.errors import InvalidArgument, NotFound
from app.kit.validation import describe_errors

# Every tool, in the order tools/list, /v1 and docs/TOOLS.md show them.
TOOL_SPECS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        population.SPEC,
        income.SPEC,
        demographics.SPEC,
        geocode.SPEC,
        reverse_geocode.SPEC,
        search_nearby.SPEC,
        static_map.SPEC,
    )
}
# The tools that take a list of calls in one (`app.geodata.batch`).
BATCH_FORMS: dict[str, BatchForm] = {
    name: spec.batch for name, spec in TOOL_SPECS.items() if spec.batch is not None
}

# Settings name the upstream-capable tools with a Literal (config imports no feature);
# the catalogue is the truth, so the two must agree.
if {s.name for s in TOOL_SPECS.values() if s.upstream_capable} != set(get_args(UpstreamTool)):
    raise RuntimeError(
        "app.kit.config.UpstreamTool must list the catalogue's upstream-capable tools"
    )


# Each tool's folder answers it: `embedded`, and `upstream` exactly when it is
# upstream-capable (found, not imported: they load numpy and the HTTP clients).
for _spec in TOOL_SPECS.values():
    for _source, _needed in (("embedded", True), ("upstream", _spec.upstream_capable)):
        if (find_spec(f"{_spec.package}.{_source}") is not None) != _needed:
            raise RuntimeError(f"{_spec.name}: {_spec.package}.{_source} present: {not _needed}")


def spec_for(name: str) -> ToolSpec:
    spec = TOOL_SPECS.get(name)
    if spec is None:
        raise NotFound(f"Unknown tool {name!r}; tools: {', '.join(TOOL_SPECS)}")
    return spec


@cache
def known_arguments(name: str) -> tuple[str, ...]:
    """The arguments a tool lists (an accepted, unlisted one such as get_population's
    `country` left out), then its batch lists."""
    spec = spec_for(name)
    listed = tuple(spec.args_model.model_json_schema()["properties"])
    batch = BATCH_FORMS.get(name)
    return listed + (tuple(b.argument for b in batch.lists) if batch else ())


def parse(name: str, arguments: Mapping[str, Any]) -> BaseModel:
    spec = spec_for(name)
    if not isinstance(arguments, Mapping):
        raise InvalidArgument("arguments must be a JSON object")
    try:
        args = spec.args_model.model_validate(dict(arguments))
    except ValidationError as exc:
        known = known_arguments(name)
        raise InvalidArgument(describe_errors(exc.errors(), known=known)) from None
    spec.check(args, get_settings())
    return args


def call_description(spec: ToolSpec, settings: Settings) -> str:
    """The description of one call of the tool as this deployment answers it."""
    return spec.describe(spec, settings)


def description_for(spec: ToolSpec, settings: Settings) -> str:
    """The tool's description for agents: one call, and its batch form where it has one."""
    form = spec.batch
    single = call_description(spec, settings)
    return f"{single} {form.note()}" if form else single


def arguments_schema(spec: ToolSpec, settings: Settings) -> dict[str, Any]:
    """The schema of one call's arguments as this deployment answers them (search_nearby:
    only the categories answered here)."""
    return spec.arguments_schema(spec, settings)


def input_schema_for(spec: ToolSpec, settings: Settings) -> dict[str, Any]:
    """The tool's input schema for agents: one call's arguments, and the batch's list
    arguments where the tool has them (then the arguments they replace are no longer
    required; a top-level oneOf would be refused by some clients)."""
    schema = arguments_schema(spec, settings)
    form = spec.batch
    if form is not None:
        for batch in form.lists:
            schema["properties"][batch.argument] = batch.schema()
        schema["required"] = [n for n in schema.get("required", []) if n not in form.replaces]
    return schema


def summarize(tool: str, result: dict[str, Any]) -> str:
    """One line with the gist of the tool's (dumped) result, or of a batch of its calls."""
    if "credits" in result:  # a batch (app.geodata.batch)
        return batch_summary(spec_for(tool), result)
    return spec_for(tool).summary(result)


def validate_arguments(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments checked and normalised (defaults filled in), as a JSON-ready dict."""
    return parse(name, arguments).model_dump(mode="json")


def policy(name: str, settings: Settings) -> ToolPolicy:
    """Who answers `name`: GEOSVC_TOOL_PROVIDERS, else GEOSVC_UPSTREAM_TOOLS ("upstream"),
    else the embedded datasets."""
    return spec_for(name).policy(settings)


def policies(settings: Settings) -> tuple[ToolPolicy, ...]:
    """Every tool's policy: what the descriptions, schemas and categories this deployment
    shows depend on (a key for documents written once per process)."""
    return tuple(policy(name, settings) for name in TOOL_SPECS)


def some_tool_goes_upstream(settings: Settings) -> bool:
    """True when a policy sends some tool to an upstream provider (first or as fallback)."""
    return any(policy(name, settings) != "embedded" for name in TOOL_SPECS)
