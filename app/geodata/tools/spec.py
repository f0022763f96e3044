"""What a tool declares (`ToolSpec`), apart from the tools, so that each tool's module
and the catalogue can import it. Light: no index is loaded from here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from app.geodata.batch import BatchForm
from app.kit.config import Settings, ToolPolicy

# One line with the gist of a (dumped, camelCase) result: the first line of the MCP text block
Summary = Callable[[dict[str, Any]], str]
# The tool's description, or its arguments' schema, as this deployment answers it
Describe = Callable[["ToolSpec", Settings], str]
ArgumentsSchema = Callable[["ToolSpec", Settings], dict[str, Any]]
# A check of valid arguments against what this deployment answers (raises an AppError)
Check = Callable[[BaseModel, Settings], None]
# An embedded answer that a policy embedded-then-upstream asks the upstream to improve on
Incomplete = Callable[[BaseModel], bool]
# Rate tokens one call takes, from its validated arguments (app.tool_calls.routing)
Weight = Callable[[Mapping[str, Any], Settings], int]
# A batch's answered items (dumped results): what the batch summary says of them all
# ("" for nothing: the summary then names the first item)
BatchGist = Callable[[list[dict[str, Any]]], str]


@dataclass(frozen=True)
class Example:
    """One call's arguments (as /v1 query parameters) and its answer (the dumped result):
    a real answer of the embedded datasets. The HTTP API's OpenAPI document and
    docs/TOOLS.md show it; a test checks the answer against the tool's result model."""

    arguments: dict[str, Any]
    result: dict[str, Any]
    # the arguments as MCP takes them, where /v1's query form differs (docs/TOOLS.md)
    mcp_arguments: dict[str, Any] | None = None
    # a batch's further items after this call, each with its outcome (/v1's OpenAPI)
    batch: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = ()


def as_written(spec: ToolSpec, settings: Settings) -> str:
    return spec.description


def model_schema(spec: ToolSpec, settings: Settings) -> dict[str, Any]:
    return spec.args_model.model_json_schema()


def no_check(args: BaseModel, settings: Settings) -> None:
    return None


def never_incomplete(result: BaseModel) -> bool:
    return False


def one_token(arguments: Mapping[str, Any], settings: Settings) -> int:
    return 1


def no_gist(answered: list[dict[str, Any]]) -> str:
    return ""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    args_model: type[BaseModel]
    result_model: type[BaseModel]
    # its folder, `app.geodata.tools.<tool>` (`__name__` of its __init__): `answer(provider,
    # args)` in its `embedded` module answers it from the shipped data, in its `upstream`
    # module (upstream-capable tools only) from the upstream provider
    package: str
    # the first line of the MCP text block: the gist of a (dumped, camelCase) result
    summary: Summary
    # GET <http_path> on the HTTP data API (POST <http_path>/batch where it has a batch)
    http_path: str
    # an example call and its real answer, for OpenAPI and docs/TOOLS.md
    example: Example
    # what the embedded data covers, and what the upstream provider adds (docs/TOOLS.md)
    coverage: tuple[str, str]
    # static_map draws from the embedded basemap only; the others may go upstream
    upstream_capable: bool = True
    # deterministic for a data vintage: /v1 answers it with Cache-Control and an ETag
    cacheable: bool = True
    read_only: bool = True
    idempotent: bool = True
    # its batch form (a list of calls in one), if it has one
    batch: BatchForm | None = None
    # per deployment: one call's description, its arguments' schema, a check of the
    # validated arguments (search_nearby: a category this deployment answers)
    describe: Describe = as_written
    arguments_schema: ArgumentsSchema = model_schema
    check: Check = no_check
    # an embedded answer the upstream may improve on (policy embedded-then-upstream)
    incomplete: Incomplete = never_incomplete
    # rate tokens one call takes (static_map: by its pixels)
    weight: Weight = one_token
    # in a batch's summary: one answered item, and what is said of all of them
    batch_item: Summary | None = None
    batch_gist: BatchGist = no_gist
    # its answer is places on a map: the MCP App (app.mcp.map_app) can show it
    answers_places: bool = False

    def policy(self, settings: Settings) -> ToolPolicy:
        """Who answers it: GEOSVC_TOOL_PROVIDERS, else GEOSVC_UPSTREAM_TOOLS ("upstream"),
        else the embedded datasets."""
        if not self.upstream_capable:
            return "embedded"
        chosen = settings.tool_providers.get(self.name)  # type: ignore[call-overload]
        if chosen is not None:
            return chosen
        return "upstream" if self.name in settings.upstream_tools else "embedded"
