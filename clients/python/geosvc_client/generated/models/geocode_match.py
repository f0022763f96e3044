from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.geocode_match_kind import GeocodeMatchKind
from ..models.geocode_match_type_type_0 import GeocodeMatchTypeType0
from ..types import UNSET, Unset

T = TypeVar("T", bound="GeocodeMatch")


@_attrs_define
class GeocodeMatch:
    """
    Attributes:
        name (str): The place's name
        label (str): Name, region and country
        lat (float): Latitude
        lon (float): Longitude
        kind (GeocodeMatchKind): admin1: state or province; poi: landmark
        confidence (float): How well the place matches the query, 0 to 1
        country_code (None | str | Unset): ISO 3166-1 alpha-2
        admin1 (None | str | Unset): State, province or region
        postal_code (None | str | Unset): ZIP code, when the place is one
        population (int | None | Unset): Residents (GeoNames)
        type_ (GeocodeMatchTypeType0 | None | Unset): Airports: size class
        matched (None | str | Unset): The part of the query matched
    """

    name: str
    label: str
    lat: float
    lon: float
    kind: GeocodeMatchKind
    confidence: float
    country_code: None | str | Unset = UNSET
    admin1: None | str | Unset = UNSET
    postal_code: None | str | Unset = UNSET
    population: int | None | Unset = UNSET
    type_: GeocodeMatchTypeType0 | None | Unset = UNSET
    matched: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        label = self.label

        lat = self.lat

        lon = self.lon

        kind = self.kind.value

        confidence = self.confidence

        country_code: None | str | Unset
        if isinstance(self.country_code, Unset):
            country_code = UNSET
        else:
            country_code = self.country_code

        admin1: None | str | Unset
        if isinstance(self.admin1, Unset):
            admin1 = UNSET
        else:
            admin1 = self.admin1

        postal_code: None | str | Unset
        if isinstance(self.postal_code, Unset):
            postal_code = UNSET
        else:
            postal_code = self.postal_code

        population: int | None | Unset
        if isinstance(self.population, Unset):
            population = UNSET
        else:
            population = self.population

        type_: None | str | Unset
        if isinstance(self.type_, Unset):
            type_ = UNSET
        elif isinstance(self.type_, GeocodeMatchTypeType0):
            type_ = self.type_.value
        else:
            type_ = self.type_

        matched: None | str | Unset
        if isinstance(self.matched, Unset):
            matched = UNSET
        else:
            matched = self.matched

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "label": label,
                "lat": lat,
                "lon": lon,
                "kind": kind,
                "confidence": confidence,
            }
        )
        if country_code is not UNSET:
            field_dict["countryCode"] = country_code
        if admin1 is not UNSET:
            field_dict["admin1"] = admin1
        if postal_code is not UNSET:
            field_dict["postalCode"] = postal_code
        if population is not UNSET:
            field_dict["population"] = population
        if type_ is not UNSET:
            field_dict["type"] = type_
        if matched is not UNSET:
            field_dict["matched"] = matched

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        label = d.pop("label")

        lat = d.pop("lat")

        lon = d.pop("lon")

        kind = GeocodeMatchKind(d.pop("kind"))

        confidence = d.pop("confidence")

        def _parse_country_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        country_code = _parse_country_code(d.pop("countryCode", UNSET))

        def _parse_admin1(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        admin1 = _parse_admin1(d.pop("admin1", UNSET))

        def _parse_postal_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        postal_code = _parse_postal_code(d.pop("postalCode", UNSET))

        def _parse_population(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        population = _parse_population(d.pop("population", UNSET))

        def _parse_type_(data: object) -> GeocodeMatchTypeType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_0 = GeocodeMatchTypeType0(data)

                return type_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(GeocodeMatchTypeType0 | None | Unset, data)

        type_ = _parse_type_(d.pop("type", UNSET))

        def _parse_matched(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        matched = _parse_matched(d.pop("matched", UNSET))

        geocode_match = cls(
            name=name,
            label=label,
            lat=lat,
            lon=lon,
            kind=kind,
            confidence=confidence,
            country_code=country_code,
            admin1=admin1,
            postal_code=postal_code,
            population=population,
            type_=type_,
            matched=matched,
        )

        geocode_match.additional_properties = d
        return geocode_match

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
