from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="NearestPostalCode")


@_attrs_define
class NearestPostalCode:
    """
    Attributes:
        code (str): Postal code (US: ZIP)
        distance_m (float): To its centre
        no_residents (bool | Unset): US: PO box/building ZIP Default: False.
    """

    code: str
    distance_m: float
    no_residents: bool | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        distance_m = self.distance_m

        no_residents = self.no_residents

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "distanceM": distance_m,
            }
        )
        if no_residents is not UNSET:
            field_dict["noResidents"] = no_residents

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        code = d.pop("code")

        distance_m = d.pop("distanceM")

        no_residents = d.pop("noResidents", UNSET)

        nearest_postal_code = cls(
            code=code,
            distance_m=distance_m,
            no_residents=no_residents,
        )

        nearest_postal_code.additional_properties = d
        return nearest_postal_code

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
