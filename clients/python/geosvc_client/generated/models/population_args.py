from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.population_args_around import PopulationArgsAround
    from ..models.population_args_within import PopulationArgsWithin


T = TypeVar("T", bound="PopulationArgs")


@_attrs_define
class PopulationArgs:
    """
    Attributes:
        postal_code (str | Unset): US ZIP code "94103" (a string; ZIP+4 ok)
        area (str | Unset): Or: US state, county, country or city
        around (PopulationArgsAround | Unset): Or: a circle {lat, lon, radius_m}, 1 m-100 km
        within (PopulationArgsWithin | Unset): Or: {bbox: [w,s,e,n]} or {polygon: [[lon,lat],...]} (<=500)
    """

    postal_code: str | Unset = UNSET
    area: str | Unset = UNSET
    around: PopulationArgsAround | Unset = UNSET
    within: PopulationArgsWithin | Unset = UNSET

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
        from ..models.population_args_around import PopulationArgsAround
        from ..models.population_args_within import PopulationArgsWithin

        d = dict(src_dict)
        postal_code = d.pop("postal_code", UNSET)

        area = d.pop("area", UNSET)

        _around = d.pop("around", UNSET)
        around: PopulationArgsAround | Unset
        if isinstance(_around, Unset):
            around = UNSET
        else:
            around = PopulationArgsAround.from_dict(_around)

        _within = d.pop("within", UNSET)
        within: PopulationArgsWithin | Unset
        if isinstance(_within, Unset):
            within = UNSET
        else:
            within = PopulationArgsWithin.from_dict(_within)

        population_args = cls(
            postal_code=postal_code,
            area=area,
            around=around,
            within=within,
        )

        return population_args
