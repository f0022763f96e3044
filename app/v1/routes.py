"""The HTTP data API's routes, one per tool (and the two batches), named in one table that
the router and the OpenAPI document both read: they cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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


ROUTES: tuple[V1Route, ...] = (
    V1Route("/v1/population", "get_population", cacheable=True),
    V1Route("/v1/average-income", "get_average_income", cacheable=True),
    V1Route("/v1/geocode", "geocode", cacheable=True),
    V1Route("/v1/reverse-geocode", "reverse_geocode", cacheable=True),
    V1Route("/v1/nearby", "search_nearby"),
    V1Route("/v1/static-map", "static_map", kind="image"),
    V1Route("/v1/geocode/batch", "geocode", kind="batch"),
    V1Route("/v1/reverse-geocode/batch", "reverse_geocode", kind="batch"),
)
