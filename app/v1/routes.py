"""The HTTP data API's routes, one per tool (and one per batch form), derived from the
tool catalogue (`ToolSpec.http_path`, `BATCH_FORMS`) into one table that the router and
the OpenAPI document both read: they cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.geodata.catalogue import BATCH_FORMS, TOOL_SPECS
from app.geodata.results import ImageResult

Kind = Literal["call", "image", "batch"]


@dataclass(frozen=True)
class V1Route:
    path: str
    tool: str
    kind: Kind = "call"
    # Deterministic for a data vintage: answered with Cache-Control and an ETag.
    cacheable: bool = False

    @property
    def method(self) -> str:
        return "POST" if self.kind == "batch" else "GET"

    @property
    def operation_id(self) -> str:
        return f"{self.tool}_batch" if self.kind == "batch" else self.tool


def _routes() -> tuple[V1Route, ...]:
    calls = [
        V1Route(
            spec.http_path,
            spec.name,
            kind="image" if issubclass(spec.result_model, ImageResult) else "call",
            cacheable=spec.cacheable,
        )
        for spec in TOOL_SPECS.values()
    ]
    batches = [V1Route(f"{TOOL_SPECS[t].http_path}/batch", t, "batch") for t in BATCH_FORMS]
    return (*calls, *batches)


ROUTES: tuple[V1Route, ...] = _routes()
