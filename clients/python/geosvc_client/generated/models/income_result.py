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

from ..models.income_result_level import IncomeResultLevel
from ..models.income_result_measure import IncomeResultMeasure
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.income_result_candidates_item import IncomeResultCandidatesItem


T = TypeVar("T", bound="IncomeResult")


@_attrs_define
class IncomeResult:
    """
    Attributes:
        amount (int): Household income in `currency` per year
        measure (IncomeResultMeasure): Which statistic `amount` is
        year (int): Last year of the survey period
        source (str): Credit to show
        dataset (str): Data release
        postal_code (None | str | Unset): The ZIP code; null for an area
        level (IncomeResultLevel | Unset): What the figure covers Default: IncomeResultLevel.POSTAL_CODE.
        name (None | str | Unset): The area matched
        area_id (None | str | Unset): US-TX, county FIPS, ISO country, city label
        country_code (None | str | Unset): ISO 3166-1 alpha-2 country code Default: 'US'.
        margin_of_error (int | None | Unset): 90% margin of error, where given
        currency (Literal['USD'] | Unset): Currency of `amount` Default: 'USD'.
        period (None | str | Unset): Survey period, e.g. "2020-2024"
        lower_bound (bool | Unset): Top-coded (e.g. 250,000+): the median is at least `amount` Default: False.
        candidates (list[IncomeResultCandidatesItem] | Unset): Other areas it may mean: {level, name, areaId}
        method (None | str | Unset): Circle: how estimated
        warnings (list[str] | Unset): Read them
    """

    amount: int
    measure: IncomeResultMeasure
    year: int
    source: str
    dataset: str
    postal_code: None | str | Unset = UNSET
    level: IncomeResultLevel | Unset = IncomeResultLevel.POSTAL_CODE
    name: None | str | Unset = UNSET
    area_id: None | str | Unset = UNSET
    country_code: None | str | Unset = "US"
    margin_of_error: int | None | Unset = UNSET
    currency: Literal["USD"] | Unset = "USD"
    period: None | str | Unset = UNSET
    lower_bound: bool | Unset = False
    candidates: list[IncomeResultCandidatesItem] | Unset = UNSET
    method: None | str | Unset = UNSET
    warnings: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        measure = self.measure.value

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

        currency = self.currency

        period: None | str | Unset
        if isinstance(self.period, Unset):
            period = UNSET
        else:
            period = self.period

        lower_bound = self.lower_bound

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
                "amount": amount,
                "measure": measure,
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
        if currency is not UNSET:
            field_dict["currency"] = currency
        if period is not UNSET:
            field_dict["period"] = period
        if lower_bound is not UNSET:
            field_dict["lowerBound"] = lower_bound
        if candidates is not UNSET:
            field_dict["candidates"] = candidates
        if method is not UNSET:
            field_dict["method"] = method
        if warnings is not UNSET:
            field_dict["warnings"] = warnings

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.income_result_candidates_item import IncomeResultCandidatesItem

        d = dict(src_dict)
        amount = d.pop("amount")

        measure = IncomeResultMeasure(d.pop("measure"))

        year = d.pop("year")

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
        level: IncomeResultLevel | Unset
        if isinstance(_level, Unset):
            level = UNSET
        else:
            level = IncomeResultLevel(_level)

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

        currency = cast(Literal["USD"] | Unset, d.pop("currency", UNSET))
        if currency != "USD" and not isinstance(currency, Unset):
            raise ValueError(f"currency must match const 'USD', got '{currency}'")

        def _parse_period(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        period = _parse_period(d.pop("period", UNSET))

        lower_bound = d.pop("lowerBound", UNSET)

        _candidates = d.pop("candidates", UNSET)
        candidates: list[IncomeResultCandidatesItem] | Unset = UNSET
        if _candidates is not UNSET:
            candidates = []
            for candidates_item_data in _candidates:
                candidates_item = IncomeResultCandidatesItem.from_dict(
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

        income_result = cls(
            amount=amount,
            measure=measure,
            year=year,
            source=source,
            dataset=dataset,
            postal_code=postal_code,
            level=level,
            name=name,
            area_id=area_id,
            country_code=country_code,
            margin_of_error=margin_of_error,
            currency=currency,
            period=period,
            lower_bound=lower_bound,
            candidates=candidates,
            method=method,
            warnings=warnings,
        )

        income_result.additional_properties = d
        return income_result

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
