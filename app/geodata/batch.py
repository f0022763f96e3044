"""Batches: up to 100 calls of one tool in one request, answered one to one, each item
priced, limited and validated like the call alone (a tool's `ToolSpec.batch`, gathered in
`app.geodata.catalogue.BATCH_FORMS`: geocode, reverse_geocode, get_population,
get_average_income, get_demographics).

Two forms carry the same items. The HTTP API takes `{"items": [<arguments>, ...]}`,
each item exactly the tool's arguments; MCP agents give the tool a list instead of its
single argument (`geocode` with `queries`, `reverse_geocode` with `points`, the
demographic tools with `postal_codes` or `areas`), the tool's other arguments then
shared by every item. Either way the answer is a `BatchResult`: `results[i]` answers
item i, with the data or the error that call alone would have given. An item that is not
a valid call is answered INVALID_ARGUMENT in its place; only a malformed list (not a
list, empty, over 100, an item that is not an object) refuses the whole batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from app.geodata import results
from app.kit.errors import InvalidArgument

MAX_BATCH_ITEMS = 100


class ItemError(BaseModel):
    # The error object of a failed item, as the call alone would have answered it.

    model_config = ConfigDict(extra="allow", frozen=True)

    code: str = Field(description="e.g. NOT_FOUND")
    message: str = Field(description="What went wrong")


class BatchItem(results.Result):
    status: int = Field(description="This item's HTTP status")
    error: ItemError | None = Field(None, description="Why the item has no answer")


class BatchResult(results.Result):
    credits: int = Field(description="Credits charged: one per item that returned data")


def batch_result(tool: type[results.Result]) -> type[BatchResult]:
    """The batch result of a tool whose call answers `tool`, named after it (`tool`
    GeocodeResult: GeocodeBatchResult of GeocodeBatchItem)."""
    stem = tool.__name__.removesuffix("Result")
    item = create_model(
        f"{stem}BatchItem",
        __base__=BatchItem,
        __module__=__name__,
        result=(tool | None, Field(None, description="The item's answer")),  # type: ignore[arg-type]
    )
    return create_model(
        f"{stem}BatchResult",
        __base__=BatchResult,
        __module__=__name__,
        results=(list[item], Field(description="One per item, in the order given")),
    )


@dataclass(frozen=True)
class BatchList:
    """A list argument that carries a batch for agents: each element is one call's
    `replaces` argument, or (several) an object of them."""

    argument: str
    replaces: tuple[str, ...]
    # the JSON schema of an element: its shape only, each item is validated as a call
    element: dict[str, Any]

    def item(self, element: Any, shared: Mapping[str, Any]) -> Any:
        if len(self.replaces) == 1:
            return {**shared, self.replaces[0]: element}
        return {**shared, **element} if isinstance(element, Mapping) else element

    def schema(self) -> dict[str, Any]:
        replaced = "/".join(f"`{name}`" for name in self.replaces)
        return {
            "type": "array",
            "items": self.element,
            "minItems": 1,
            "maxItems": MAX_BATCH_ITEMS,
            "description": f"Instead of {replaced}",
        }


@dataclass(frozen=True)
class BatchForm:
    """A tool's batch: the list arguments that carry it for agents (one per call), the
    arguments every item shares, the batch's result."""

    lists: tuple[BatchList, ...]
    shared: tuple[str, ...]
    result_model: type[BatchResult]

    @property
    def replaces(self) -> tuple[str, ...]:
        """The single call's arguments that a list replaces."""
        return tuple(name for batch in self.lists for name in batch.replaces)

    def note(self) -> str:
        """What the tool's description says of it."""
        lists = " or ".join(f"`{batch.argument}`" for batch in self.lists)
        return f"Batch: {lists} (`results[i]`: item i)."

    def list_length(self, arguments: Mapping[str, Any] | None) -> int | None:
        """How many items the call's list holds; None when it gives no list (or not one)."""
        if not isinstance(arguments, Mapping):
            return None
        lengths = [
            len(value)
            for batch in self.lists
            if isinstance(value := arguments.get(batch.argument), list)
        ]
        return lengths[0] if len(lengths) == 1 else None

    def is_called(self, arguments: Mapping[str, Any] | None) -> bool:
        """True when an agent called the tool in this batch form."""
        return isinstance(arguments, Mapping) and any(
            batch.argument in arguments for batch in self.lists
        )

    def items(self, arguments: Mapping[str, Any], max_items: int = MAX_BATCH_ITEMS) -> list[Any]:
        """The items of an agent's batch call, the shared arguments in each (each item then
        validated as a call of its own); InvalidArgument when the call is not a batch.
        `max_items`: more for a batch run as a task (`app.mcp.tasks`)."""
        given = [batch for batch in self.lists if batch.argument in arguments]
        if len(given) > 1:
            lists = ", ".join(batch.argument for batch in given)
            raise InvalidArgument(f"{lists}: give one list per call")
        (batch,) = given
        single = [argument for argument in self.replaces if argument in arguments]
        if single:
            raise InvalidArgument(
                f"{', '.join(single)}: not with `{batch.argument}` (give one call or a batch)"
            )
        known = (batch.argument, *self.shared)
        unknown = [argument for argument in arguments if argument not in known]
        if unknown:
            raise InvalidArgument(
                f"{unknown[0]}: is not a known argument (known: {', '.join(known)})"
            )
        elements = _checked_list(batch.argument, arguments[batch.argument], max_items)
        shared = {name: arguments[name] for name in self.shared if name in arguments}
        items = [batch.item(element, shared) for element in elements]
        _objects(batch.argument, items)
        return items


def batch_body_items(body: object) -> list[Any]:
    """The items of an HTTP batch body `{"items": [...]}` (each validated on its own)."""
    if not isinstance(body, Mapping):
        raise InvalidArgument('The body must be a JSON object {"items": [...]}')
    unknown = sorted(set(body) - {"items"})
    if unknown:
        raise InvalidArgument(f"{unknown[0]}: is not a known field (known: items)")
    items = _checked_list("items", body.get("items"))
    _objects("items", items)
    return items


def _checked_list(argument: str, value: object, max_items: int = MAX_BATCH_ITEMS) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidArgument(f"{argument}: must be a list of 1 to {max_items:,} items")
    if not 1 <= len(value) <= max_items:
        raise InvalidArgument(f"{argument}: must hold 1 to {max_items:,} items, not {len(value):,}")
    return value


def _objects(argument: str, items: list[Any]) -> None:
    """A list whose item is not an object is malformed: no call could be read from it."""
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InvalidArgument(f"{argument}[{index}]: must be a JSON object")
