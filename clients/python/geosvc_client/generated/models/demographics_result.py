from __future__ import annotations

from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.demographics_result_level import DemographicsResultLevel
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.measure import Measure


T = TypeVar("T", bound="DemographicsResult")


@_attrs_define
class DemographicsResult:
    """
    Attributes:
        measures (list[Measure]): Figures
        year (int): Survey end
        period (str): e.g. "2019-2023"
        source (str): Credit to show
        dataset (str): Data release
        postal_code (None | str | Unset): The ZIP code; null for an area
        level (DemographicsResultLevel | Unset): What they cover Default: DemographicsResultLevel.POSTAL_CODE.
        name (None | str | Unset): The area matched
        area_id (None | str | Unset): US-TX, county FIPS, ISO country, city label
        country_code (Literal['US'] | Unset): US Default: 'US'.
        place_name (None | str | Unset): Main city
        state (None | str | Unset): State code
        warnings (list[str] | Unset): Unpublished figures
    """

    measures: list[Measure]
    year: int
    period: str
    source: str
    dataset: str
    postal_code: None | str | Unset = UNSET
    level: DemographicsResultLevel | Unset = DemographicsResultLevel.POSTAL_CODE
    name: None | str | Unset = UNSET
    area_id: None | str | Unset = UNSET
    country_code: Literal["US"] | Unset = "US"
    place_name: None | str | Unset = UNSET
    state: None | str | Unset = UNSET
    warnings: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        measures = []
        for measures_item_data in self.measures:
            measures_item = measures_item_data.to_dict()
            measures.append(measures_item)

        year = self.year

        period = self.period

        source = self.source

        dataset = self.dataset

        postal_code: None | str | Unset
        if isinstance(self.postal_code, Unset):
            postal_code = UNSET
        else:
            postal_code = self.postal_code

        level: str | Unset = UNSET
        if not isinstance(self.level, Unset):
            level = self.level.value

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        area_id: None | str | Unset
        if isinstance(self.area_id, Unset):
            area_id = UNSET
        else:
            area_id = self.area_id

        country_code = self.country_code

        place_name: None | str | Unset
        if isinstance(self.place_name, Unset):
            place_name = UNSET
        else:
            place_name = self.place_name

        state: None | str | Unset
        if isinstance(self.state, Unset):
            state = UNSET
        else:
            state = self.state

        warnings: list[str] | Unset = UNSET
        if not isinstance(self.warnings, Unset):
            warnings = self.warnings

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "measures": measures,
                "year": year,
                "period": period,
                "source": source,
                "dataset": dataset,
            }
        )
        if postal_code is not UNSET:
            field_dict["postalCode"] = postal_code
        if level is not UNSET:
            field_dict["level"] = level
        if name is not UNSET:
            field_dict["name"] = name
        if area_id is not UNSET:
            field_dict["areaId"] = area_id
        if country_code is not UNSET:
            field_dict["countryCode"] = country_code
        if place_name is not UNSET:
            field_dict["placeName"] = place_name
        if state is not UNSET:
            field_dict["state"] = state
        if warnings is not UNSET:
            field_dict["warnings"] = warnings

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.measure import Measure

        d = dict(src_dict)
        measures = []
        _measures = d.pop("measures")
        for measures_item_data in _measures:
            measures_item = Measure.from_dict(measures_item_data)

            measures.append(measures_item)

        year = d.pop("year")

        period = d.pop("period")

        source = d.pop("source")

        dataset = d.pop("dataset")

        def _parse_postal_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        postal_code = _parse_postal_code(d.pop("postalCode", UNSET))

        _level = d.pop("level", UNSET)
        level: DemographicsResultLevel | Unset
        if isinstance(_level, Unset):
            level = UNSET
        else:
            level = DemographicsResultLevel(_level)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_area_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        area_id = _parse_area_id(d.pop("areaId", UNSET))

        country_code = cast(Literal["US"] | Unset, d.pop("countryCode", UNSET))
        if country_code != "US" and not isinstance(country_code, Unset):
            raise ValueError(f"countryCode must match const 'US', got '{country_code}'")

        def _parse_place_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        place_name = _parse_place_name(d.pop("placeName", UNSET))

        def _parse_state(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        state = _parse_state(d.pop("state", UNSET))

        warnings = cast(list[str], d.pop("warnings", UNSET))

        demographics_result = cls(
            measures=measures,
            year=year,
            period=period,
            source=source,
            dataset=dataset,
            postal_code=postal_code,
            level=level,
            name=name,
            area_id=area_id,
            country_code=country_code,
            place_name=place_name,
            state=state,
            warnings=warnings,
        )

        demographics_result.additional_properties = d
        return demographics_result

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
