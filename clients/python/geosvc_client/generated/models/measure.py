from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.measure_unit import MeasureUnit
from ..types import UNSET, Unset

T = TypeVar("T", bound="Measure")


@_attrs_define
class Measure:
    """
    Attributes:
        topic (str): e.g. age
        name (str): e.g. median_age
        value (float | None): null if unpublished
        unit (MeasureUnit): Of `value`
        of (str): Whom it counts
        lower_bound (bool | Unset): Top-coded: at least `value` Default: False.
        margin_of_error (float | None | Unset): 90% MOE, if published
    """

    topic: str
    name: str
    value: float | None
    unit: MeasureUnit
    of: str
    lower_bound: bool | Unset = False
    margin_of_error: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        topic = self.topic

        name = self.name

        value: float | None
        value = self.value

        unit = self.unit.value

        of = self.of

        lower_bound = self.lower_bound

        margin_of_error: float | None | Unset
        if isinstance(self.margin_of_error, Unset):
            margin_of_error = UNSET
        else:
            margin_of_error = self.margin_of_error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "topic": topic,
                "name": name,
                "value": value,
                "unit": unit,
                "of": of,
            }
        )
        if lower_bound is not UNSET:
            field_dict["lowerBound"] = lower_bound
        if margin_of_error is not UNSET:
            field_dict["marginOfError"] = margin_of_error

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        topic = d.pop("topic")

        name = d.pop("name")

        def _parse_value(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        value = _parse_value(d.pop("value"))

        unit = MeasureUnit(d.pop("unit"))

        of = d.pop("of")

        lower_bound = d.pop("lowerBound", UNSET)

        def _parse_margin_of_error(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        margin_of_error = _parse_margin_of_error(d.pop("marginOfError", UNSET))

        measure = cls(
            topic=topic,
            name=name,
            value=value,
            unit=unit,
            of=of,
            lower_bound=lower_bound,
            margin_of_error=margin_of_error,
        )

        measure.additional_properties = d
        return measure

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
