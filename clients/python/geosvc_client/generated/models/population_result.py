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

from ..models.population_result_level import PopulationResultLevel
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.population_result_candidates_item import (
        PopulationResultCandidatesItem,
    )


T = TypeVar("T", bound="PopulationResult")


@_attrs_define
class PopulationResult:
    """
    Attributes:
        population (int): Residents counted in the area
        year (int | None): Year of the count or survey end; null: not stated
        source (str): Credit to show
        dataset (str): Data release
        postal_code (None | str | Unset): The ZIP code; null for an area
        level (PopulationResultLevel | Unset): What the figure covers Default: PopulationResultLevel.POSTAL_CODE.
        name (None | str | Unset): The area matched
        area_id (None | str | Unset): US-TX, county FIPS, ISO country, city label
        country_code (None | str | Unset): ISO 3166-1 alpha-2 country code Default: 'US'.
        margin_of_error (int | None | Unset): 90% margin of error, where given
        measure (Literal['total_population'] | Unset): What `population` counts Default: 'total_population'.
        place_name (None | str | Unset): The ZIP's main city
        state (None | str | Unset): US state code
        county (None | str | Unset): The ZIP's county
        candidates (list[PopulationResultCandidatesItem] | Unset): Other areas it may mean: {level, name, areaId}
        method (None | str | Unset): Circle: how estimated
        warnings (list[str] | Unset): Read them
    """

    population: int
    year: int | None
    source: str
    dataset: str
    postal_code: None | str | Unset = UNSET
    level: PopulationResultLevel | Unset = PopulationResultLevel.POSTAL_CODE
    name: None | str | Unset = UNSET
    area_id: None | str | Unset = UNSET
    country_code: None | str | Unset = "US"
    margin_of_error: int | None | Unset = UNSET
    measure: Literal["total_population"] | Unset = "total_population"
    place_name: None | str | Unset = UNSET
    state: None | str | Unset = UNSET
    county: None | str | Unset = UNSET
    candidates: list[PopulationResultCandidatesItem] | Unset = UNSET
    method: None | str | Unset = UNSET
    warnings: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        population = self.population

        year: int | None
        year = self.year

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

        country_code: None | str | Unset
        if isinstance(self.country_code, Unset):
            country_code = UNSET
        else:
            country_code = self.country_code

        margin_of_error: int | None | Unset
        if isinstance(self.margin_of_error, Unset):
            margin_of_error = UNSET
        else:
            margin_of_error = self.margin_of_error

        measure = self.measure

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

        county: None | str | Unset
        if isinstance(self.county, Unset):
            county = UNSET
        else:
            county = self.county

        candidates: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.candidates, Unset):
            candidates = []
            for candidates_item_data in self.candidates:
                candidates_item = candidates_item_data.to_dict()
                candidates.append(candidates_item)

        method: None | str | Unset
        if isinstance(self.method, Unset):
            method = UNSET
        else:
            method = self.method

        warnings: list[str] | Unset = UNSET
        if not isinstance(self.warnings, Unset):
            warnings = self.warnings

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "population": population,
                "year": year,
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
        if margin_of_error is not UNSET:
            field_dict["marginOfError"] = margin_of_error
        if measure is not UNSET:
            field_dict["measure"] = measure
        if place_name is not UNSET:
            field_dict["placeName"] = place_name
        if state is not UNSET:
            field_dict["state"] = state
        if county is not UNSET:
            field_dict["county"] = county
        if candidates is not UNSET:
            field_dict["candidates"] = candidates
        if method is not UNSET:
            field_dict["method"] = method
        if warnings is not UNSET:
            field_dict["warnings"] = warnings

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.population_result_candidates_item import (
            PopulationResultCandidatesItem,
        )

        d = dict(src_dict)
        population = d.pop("population")

        def _parse_year(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        year = _parse_year(d.pop("year"))

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
        level: PopulationResultLevel | Unset
        if isinstance(_level, Unset):
            level = UNSET
        else:
            level = PopulationResultLevel(_level)

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

        def _parse_country_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        country_code = _parse_country_code(d.pop("countryCode", UNSET))

        def _parse_margin_of_error(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        margin_of_error = _parse_margin_of_error(d.pop("marginOfError", UNSET))

        measure = cast(Literal["total_population"] | Unset, d.pop("measure", UNSET))
        if measure != "total_population" and not isinstance(measure, Unset):
            raise ValueError(
                f"measure must match const 'total_population', got '{measure}'"
            )

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

        def _parse_county(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        county = _parse_county(d.pop("county", UNSET))

        _candidates = d.pop("candidates", UNSET)
        candidates: list[PopulationResultCandidatesItem] | Unset = UNSET
        if _candidates is not UNSET:
            candidates = []
            for candidates_item_data in _candidates:
                candidates_item = PopulationResultCandidatesItem.from_dict(
                    candidates_item_data
                )

                candidates.append(candidates_item)

        def _parse_method(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        method = _parse_method(d.pop("method", UNSET))

        warnings = cast(list[str], d.pop("warnings", UNSET))

        population_result = cls(
            population=population,
            year=year,
            source=source,
            dataset=dataset,
            postal_code=postal_code,
            level=level,
            name=name,
            area_id=area_id,
            country_code=country_code,
            margin_of_error=margin_of_error,
            measure=measure,
            place_name=place_name,
            state=state,
            county=county,
            candidates=candidates,
            method=method,
            warnings=warnings,
        )

        population_result.additional_properties = d
        return population_result

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
