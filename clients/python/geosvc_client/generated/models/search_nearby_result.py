from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.search_nearby_result_order import SearchNearbyResultOrder
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.nearby_place import NearbyPlace


T = TypeVar("T", bound="SearchNearbyResult")


@_attrs_define
class SearchNearbyResult:
    """
    Attributes:
        category (str): The category searched for
        radius_m (float): The search radius
        results (list[NearbyPlace]): This page, sorted by `order`
        source (str): Credit to show
        dataset (str): Data release
        order (SearchNearbyResultOrder | Unset): How `results` are sorted Default: SearchNearbyResultOrder.DISTANCE.
        total (int | None | Unset): How many in range, when known
        truncated (bool | Unset): More follow (nextCursor) Default: False.
        next_cursor (None | str | Unset): Pass as `cursor` for the next page
    """

    category: str
    radius_m: float
    results: list[NearbyPlace]
    source: str
    dataset: str
    order: SearchNearbyResultOrder | Unset = SearchNearbyResultOrder.DISTANCE
    total: int | None | Unset = UNSET
    truncated: bool | Unset = False
    next_cursor: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        category = self.category

        radius_m = self.radius_m

        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)

        source = self.source

        dataset = self.dataset

        order: str | Unset = UNSET
        if not isinstance(self.order, Unset):
            order = self.order.value

        total: int | None | Unset
        if isinstance(self.total, Unset):
            total = UNSET
        else:
            total = self.total

        truncated = self.truncated

        next_cursor: None | str | Unset
        if isinstance(self.next_cursor, Unset):
            next_cursor = UNSET
        else:
            next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "category": category,
                "radiusM": radius_m,
                "results": results,
                "source": source,
                "dataset": dataset,
            }
        )
        if order is not UNSET:
            field_dict["order"] = order
        if total is not UNSET:
            field_dict["total"] = total
        if truncated is not UNSET:
            field_dict["truncated"] = truncated
        if next_cursor is not UNSET:
            field_dict["nextCursor"] = next_cursor

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.nearby_place import NearbyPlace

        d = dict(src_dict)
        category = d.pop("category")

        radius_m = d.pop("radiusM")

        results = []
        _results = d.pop("results")
        for results_item_data in _results:
            results_item = NearbyPlace.from_dict(results_item_data)

            results.append(results_item)

        source = d.pop("source")

        dataset = d.pop("dataset")

        _order = d.pop("order", UNSET)
        order: SearchNearbyResultOrder | Unset
        if isinstance(_order, Unset):
            order = UNSET
        else:
            order = SearchNearbyResultOrder(_order)

        def _parse_total(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        total = _parse_total(d.pop("total", UNSET))

        truncated = d.pop("truncated", UNSET)

        def _parse_next_cursor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_cursor = _parse_next_cursor(d.pop("nextCursor", UNSET))

        search_nearby_result = cls(
            category=category,
            radius_m=radius_m,
            results=results,
            source=source,
            dataset=dataset,
            order=order,
            total=total,
            truncated=truncated,
            next_cursor=next_cursor,
        )

        search_nearby_result.additional_properties = d
        return search_nearby_result

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
