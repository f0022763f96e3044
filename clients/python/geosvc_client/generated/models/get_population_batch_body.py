from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.get_population_batch_body_items_item_type_1 import (
        GetPopulationBatchBodyItemsItemType1,
    )
    from ..models.population_args import PopulationArgs


T = TypeVar("T", bound="GetPopulationBatchBody")


@_attrs_define
class GetPopulationBatchBody:
    """
    Attributes:
        items (list[GetPopulationBatchBodyItemsItemType1 | PopulationArgs]):
    """

    items: list[GetPopulationBatchBodyItemsItemType1 | PopulationArgs]

    def to_dict(self) -> dict[str, Any]:
        from ..models.population_args import PopulationArgs

        items = []
        for items_item_data in self.items:
            items_item: dict[str, Any]
            if isinstance(items_item_data, PopulationArgs):
                items_item = items_item_data.to_dict()
            else:
                items_item = items_item_data.to_dict()

            items.append(items_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "items": items,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.get_population_batch_body_items_item_type_1 import (
            GetPopulationBatchBodyItemsItemType1,
        )
        from ..models.population_args import PopulationArgs

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:

            def _parse_items_item(
                data: object,
            ) -> GetPopulationBatchBodyItemsItemType1 | PopulationArgs:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    items_item_type_0 = PopulationArgs.from_dict(data)

                    return items_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                items_item_type_1 = GetPopulationBatchBodyItemsItemType1.from_dict(data)

                return items_item_type_1

            items_item = _parse_items_item(items_item_data)

            items.append(items_item)

        get_population_batch_body = cls(
            items=items,
        )

        return get_population_batch_body
