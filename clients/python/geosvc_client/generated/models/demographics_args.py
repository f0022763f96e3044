from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.demographics_args_topics_type_0_item import (
    DemographicsArgsTopicsType0Item,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.demographics_args_around import DemographicsArgsAround
    from ..models.demographics_args_within import DemographicsArgsWithin


T = TypeVar("T", bound="DemographicsArgs")


@_attrs_define
class DemographicsArgs:
    """
    Attributes:
        postal_code (str | Unset): US ZIP code "94103" (a string; ZIP+4 ok)
        area (str | Unset): Or: US state, county, country or city
        around (DemographicsArgsAround | Unset): Or: a circle {lat, lon, radius_m}, 1 m-100 km
        within (DemographicsArgsWithin | Unset): Or: {bbox: [w,s,e,n]} or {polygon: [[lon,lat],...]} (<=500)
        topics (list[DemographicsArgsTopicsType0Item] | None | Unset): Only these topics (default all)
    """

    postal_code: str | Unset = UNSET
    area: str | Unset = UNSET
    around: DemographicsArgsAround | Unset = UNSET
    within: DemographicsArgsWithin | Unset = UNSET
    topics: list[DemographicsArgsTopicsType0Item] | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        postal_code = self.postal_code

        area = self.area

        around: dict[str, Any] | Unset = UNSET
        if not isinstance(self.around, Unset):
            around = self.around.to_dict()

        within: dict[str, Any] | Unset = UNSET
        if not isinstance(self.within, Unset):
            within = self.within.to_dict()

        topics: list[str] | None | Unset
        if isinstance(self.topics, Unset):
            topics = UNSET
        elif isinstance(self.topics, list):
            topics = []
            for topics_type_0_item_data in self.topics:
                topics_type_0_item = topics_type_0_item_data.value
                topics.append(topics_type_0_item)

        else:
            topics = self.topics

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
        if topics is not UNSET:
            field_dict["topics"] = topics

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.demographics_args_around import DemographicsArgsAround
        from ..models.demographics_args_within import DemographicsArgsWithin

        d = dict(src_dict)
        postal_code = d.pop("postal_code", UNSET)

        area = d.pop("area", UNSET)

        _around = d.pop("around", UNSET)
        around: DemographicsArgsAround | Unset
        if isinstance(_around, Unset):
            around = UNSET
        else:
            around = DemographicsArgsAround.from_dict(_around)

        _within = d.pop("within", UNSET)
        within: DemographicsArgsWithin | Unset
        if isinstance(_within, Unset):
            within = UNSET
        else:
            within = DemographicsArgsWithin.from_dict(_within)

        def _parse_topics(
            data: object,
        ) -> list[DemographicsArgsTopicsType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                topics_type_0 = []
                _topics_type_0 = data
                for topics_type_0_item_data in _topics_type_0:
                    topics_type_0_item = DemographicsArgsTopicsType0Item(
                        topics_type_0_item_data
                    )

                    topics_type_0.append(topics_type_0_item)

                return topics_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[DemographicsArgsTopicsType0Item] | None | Unset, data)

        topics = _parse_topics(d.pop("topics", UNSET))

        demographics_args = cls(
            postal_code=postal_code,
            area=area,
            around=around,
            within=within,
            topics=topics,
        )

        return demographics_args
