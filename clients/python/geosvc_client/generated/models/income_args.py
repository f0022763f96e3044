from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.income_args_around import IncomeArgsAround
    from ..models.income_args_within import IncomeArgsWithin


T = TypeVar("T", bound="IncomeArgs")


@_attrs_define
class IncomeArgs:
    """
    Attributes:
        postal_code (str | Unset): US ZIP code "94103" (a string; ZIP+4 ok)
        area (str | Unset): Or: US state, county, country or city
        around (IncomeArgsAround | Unset): Or: a circle {lat, lon, radius_m}, 1 m-100 km
        within (IncomeArgsWithin | Unset): Or: {bbox: [w,s,e,n]} or {polygon: [[lon,lat],...]} (<=500)
    """

    postal_code: str | Unset = UNSET
    area: str | Unset = UNSET
    around: IncomeArgsAround | Unset = UNSET
    within: IncomeArgsWithin | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        postal_code = self.postal_code

        area = self.area

        around: dict[str, Any] | Unset = UNSET
        if not isinstance(self.around, Unset):
            around = self.around.to_dict()

        within: dict[str, Any] | Unset = UNSET
        if not isinstance(self.within, Unset):
            within = self.within.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if postal_code is not UNSET:
            field_dict["postal_code"] = postal_code
        if area is not UNSET:
            field_dict["area"] = area
        if around is not UNSET:
            field_dict["around"] = around
        if within is not UNSET:
            field_dict["within"] = within

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.income_args_around import IncomeArgsAround
        from ..models.income_args_within import IncomeArgsWithin

        d = dict(src_dict)
        postal_code = d.pop("postal_code", UNSET)

        area = d.pop("area", UNSET)

        _around = d.pop("around", UNSET)
        around: IncomeArgsAround | Unset
        if isinstance(_around, Unset):
            around = UNSET
        else:
            around = IncomeArgsAround.from_dict(_around)

        _within = d.pop("within", UNSET)
        within: IncomeArgsWithin | Unset
        if isinstance(_within, Unset):
            within = UNSET
        else:
            within = IncomeArgsWithin.from_dict(_within)

        income_args = cls(
            postal_code=postal_code,
            area=area,
            around=around,
            within=within,
        )

        return income_args
