"""Executing the tools: the provider each tool's policy picks, loaded once per process.

Thin edges (MCP tools, Celery tasks, the CLI) call `validate_arguments` and `execute`.
The embedded provider loads its indices once per process, lazily under a lock, or eagerly
through `warm_up()`; after that every call reads shared immutable arrays, so `execute` is
thread-safe. Importing this module loads no index and no numpy: the api process only
validates.

Per-tool policies (GEOSVC_TOOL_PROVIDERS): `embedded`; `upstream`; `embedded-then-upstream`
(the embedded answer when it is complete, else upstream: NOT_FOUND, a category only the
upstream has, or an address resolved only to its town); `upstream-then-embedded` (the
embedded answer when the upstream is unavailable, said in `source`).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from app.geodata import results
from app.geodata.catalogue import (
    TOOL_SPECS,
    ToolSpec,
    parse,
    policy,
    some_tool_goes_upstream,
    validate_arguments,
)
from app.geodata.loading import provider, use_data_dir
from app.kit.config import get_settings
from app.kit.errors import NotFound, Unsupported, UpstreamUnavailable

if TYPE_CHECKING:
    from app.geodata.providers.upstream import UpstreamProvider

__all__ = ["TOOL_SPECS", "ToolResult", "ToolSpec", "execute", "validate_arguments", "warm_up"]

FALLBACK_SOURCE = "embedded fallback (upstream unavailable): "


@dataclass(frozen=True)
class ToolResult:
    structured: dict[str, Any]
    png: bytes | None = None
    app_meta: dict[str, Any] | None = None  # for the MCP result's `_meta` (ImageResult)


# --- the upstream provider, built once per process (the embedded one: app.geodata.loading) ------

_lock = threading.Lock()
_upstream: UpstreamProvider | None = None


def configure(data_dir: Path | None) -> None:
    """Use indices under `data_dir` (None: Settings.data_dir) and the current Settings'
    upstreams from the next call on."""
    use_data_dir(data_dir)
    use_current_upstreams()


def use_current_upstreams() -> None:
    """Build the upstream provider from the current Settings on its next use; the loaded
    indices stay (a test that changes the tools' policies needs no reload of them)."""
    global _upstream
    with _lock:
        _upstream = None


def upstream_provider() -> UpstreamProvider:
    global _upstream
    with _lock:
        if _upstream is None:
            from app.geodata.providers.upstream import UpstreamProvider

            _upstream = UpstreamProvider(get_settings())
        return _upstream


def warm_up() -> None:
    """Load (building if needed) the indices now rather than on the first call, with
    get_demographics' table, the area tables (states, counties, countries) a call with
    `area` reads, and the upstream provider's clients where a policy goes upstream (their
    imports take seconds)."""
    provider().areas.tables()
    from app.geodata.providers.embedded import profiles

    profiles.table()
    for spec in TOOL_SPECS.values():  # each tool's embedded answer, imported once here
        answerer(spec.package, "embedded")
    warm_up_upstream()


def warm_up_upstream() -> None:
    """The upstream provider's clients now, where a policy goes upstream (their imports
    take seconds): the api builds them at start-up, since it answers cache hits with
    them on its event loop (app.tool_calls.cached)."""
    if some_tool_goes_upstream(get_settings()):
        upstream_provider()
        for spec in TOOL_SPECS.values():
            if spec.upstream_capable:
                answerer(spec.package, "upstream")


# `answer(provider, args)` of a tool folder's `embedded` or `upstream` module
Answer = Callable[[Any, Any], BaseModel]


@cache
def answerer(package: str, source: Literal["embedded", "upstream"]) -> Answer:
    """The tool's answer from one source, its module imported on the first call (the
    embedded ones load numpy and the indices' readers; the catalogue checks at import that
    each tool has the modules its spec says)."""
    answer: Answer = importlib.import_module(f"{package}.{source}").answer
    return answer


def _from_embedded(spec: ToolSpec, args: BaseModel) -> BaseModel:
    return answerer(spec.package, "embedded")(provider(), args)


def _from_upstream(spec: ToolSpec, args: BaseModel) -> BaseModel:
    return answerer(spec.package, "upstream")(upstream_provider(), args)


def _answer(spec: ToolSpec, args: BaseModel) -> BaseModel:
    chosen = policy(spec.name, get_settings())
    # a circle or shape (`around`, `within`) is estimated from the shipped data only,
    # whoever answers the rest
    ring = getattr(args, "around", None) or getattr(args, "within", None)
    if chosen == "embedded" or ring is not None:
        return _from_embedded(spec, args)
    if chosen == "upstream":
        return _from_upstream(spec, args)
    if chosen == "embedded-then-upstream":
        try:
            local = _from_embedded(spec, args)
        except (NotFound, Unsupported):
            return _from_upstream(spec, args)
        if not spec.incomplete(local):
            return local
        try:
            return _from_upstream(spec, args)
        except NotFound:
            return local
    try:
        return _from_upstream(spec, args)
    except UpstreamUnavailable as outage:
        try:
            local = _from_embedded(spec, args)
        except Unsupported:  # nothing offline to fall back on: the outage is the answer
            raise outage from None

        source = str(getattr(local, "source", ""))
        return local.model_copy(update={"source": FALLBACK_SOURCE + source})


def execute(name: str, arguments: Mapping[str, Any]) -> ToolResult:
    spec = TOOL_SPECS.get(name)
    args = parse(name, arguments)
    assert spec is not None  # parse refused unknown names
    result = _answer(spec, args)
    image = result if isinstance(result, results.ImageResult) else None
    return ToolResult(
        structured=result.model_dump(mode="json", by_alias=True),
        png=image.png if image else None,
        app_meta=(image.app_meta or None) if image else None,
    )
