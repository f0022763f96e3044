"""Batches of `geocode` and `reverse_geocode`: up to 100 calls in one request, answered
one to one, each item priced, limited and validated like the call alone.

Two forms carry the same items. The HTTP API takes `{"items": [<arguments>, ...]}`,
each item exactly the tool's arguments; MCP agents give the tool a list instead of its
single argument (`geocode` with `queries`, `reverse_geocode` with `points`). Either way
the answer is a `BatchResult`: `results[i]` answers item i, with the data or the error
that call alone would have given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.errors import InvalidArgument
from app.geodata import results, schemas
from app.geodata.results import Result
from app.validation import describe_errors

MAX_BATCH_ITEMS = 100


class GeocodeQueries(schemas.Arguments):
    """`geocode` given several queries (the MCP batch form); each query is then checked
    as a `geocode` call of its own, with the shared `country` and `limit`."""

    queries: list[Any] = Field(
        min_length=1,
        max_length=MAX_BATCH_ITEMS,
        json_schema_extra={"items": {"type": "string", "minLength": 1, "maxLength": 256}},
        description=f"Instead of `query`: up to {MAX_BATCH_ITEMS}",
    )
    country: Any = None
    limit: Any = 5

    def items(self) -> list[Any]:
        return [{"query": q, "country": self.country, "limit": self.limit} for q in self.queries]


class ReversePoints(schemas.Arguments):
    """`reverse_geocode` given several points (the MCP batch form); each point is then
    checked as a `reverse_geocode` call of its own."""

    points: list[Any] = Field(
        min_length=1,
        max_length=MAX_BATCH_ITEMS,
        json_schema_extra={"items": schemas.LatLon.model_json_schema()},
        description=f"Instead of `lat` and `lon`: up to {MAX_BATCH_ITEMS} points",
    )

    def items(self) -> list[Any]:
        return list(self.points)


class ItemError(BaseModel):
    # The error object of a failed item, as the call alone would have answered it.

    model_config = ConfigDict(extra="allow", frozen=True)

    code: str = Field(description="e.g. NOT_FOUND")
    message: str = Field(description="What went wrong")


class BatchItem(Result):
    status: int = Field(description="This item's HTTP status")
    error: ItemError | None = Field(None, description="Why the item has no answer")


class BatchResult(Result):
    credits: int = Field(description="Credits charged: one per item that returned data")


class GeocodeBatchItem(BatchItem):
    result: results.GeocodeResult | None = Field(None, description="The item's answer")


class GeocodeBatchResult(BatchResult):
    results: list[GeocodeBatchItem] = Field(description="One per query, in the order given")


class ReverseGeocodeBatchItem(BatchItem):
    result: results.ReverseGeocodeResult | None = Field(None, description="The item's answer")


class ReverseGeocodeBatchResult(BatchResult):
    results: list[ReverseGeocodeBatchItem] = Field(description="One per point, in order")


@dataclass(frozen=True)
class BatchForm:
    """A tool's batch: the argument that carries it for agents, its model, its result."""

    argument: str
    model: type[GeocodeQueries] | type[ReversePoints]
    result_model: type[BatchResult]
    # the single call's arguments that the batch argument replaces
    replaces: tuple[str, ...]
    # what the tool's description says of it
    note: str


BATCH_FORMS: dict[str, BatchForm] = {
    "geocode": BatchForm(
        "queries",
        GeocodeQueries,
        GeocodeBatchResult,
        ("query",),
        "Several places at once: `queries` instead of `query`; `results[i]` answers "
        "queries[i], 1 credit per query found.",
    ),
    "reverse_geocode": BatchForm(
        "points",
        ReversePoints,
        ReverseGeocodeBatchResult,
        ("lat", "lon"),
        "Several points at once: `points` instead of `lat`/`lon`; `results[i]` answers "
        "points[i], 1 credit per point named.",
    ),
}


def is_batch_call(name: str, arguments: Mapping[str, Any] | None) -> bool:
    """True when an agent called `name` in its batch form."""
    form = BATCH_FORMS.get(name)
    return form is not None and isinstance(arguments, Mapping) and form.argument in arguments


def batch_items(name: str, arguments: Mapping[str, Any]) -> list[Any]:
    """The items of an agent's batch call (each then validated as a call of its own)."""
    form = BATCH_FORMS[name]
    given = [argument for argument in form.replaces if argument in arguments]
    if given:
        raise InvalidArgument(
            f"{', '.join(given)}: not with `{form.argument}` (give one call or a batch)"
        )
    try:
        return form.model.model_validate(dict(arguments)).items()
    except ValidationError as exc:
        known = form.model.model_fields
        raise InvalidArgument(describe_errors(exc.errors(), known=known)) from None


def batch_body_items(body: object) -> list[Any]:
    """The items of an HTTP batch body `{"items": [...]}` (each validated on its own)."""
    if not isinstance(body, Mapping):
        raise InvalidArgument('The body must be a JSON object {"items": [...]}')
    unknown = sorted(set(body) - {"items"})
    if unknown:
        raise InvalidArgument(f"{unknown[0]}: is not a known field (known: items)")
    items = body.get("items")
    if not isinstance(items, list):
        raise InvalidArgument("items: is required, a list of 1 to 100 calls' arguments")
    if not 1 <= len(items) <= MAX_BATCH_ITEMS:
        raise InvalidArgument(f"items: must hold 1 to {MAX_BATCH_ITEMS} items, not {len(items)}")
    return items
