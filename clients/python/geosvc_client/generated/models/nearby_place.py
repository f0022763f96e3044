from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.nearby_place_type_type_0 import NearbyPlaceTypeType0
from ..types import UNSET, Unset

T = TypeVar("T", bound="NearbyPlace")


@_attrs_define
class NearbyPlace:
    """
    Attributes:
        name (str): The place's name
        category (str): The category searched for
        lat (float): Latitude
        lon (float): Longitude
        distance_m (float): From the query point
        code (None | str | Unset): IATA/ICAO or postal code
        country_code (None | str | Unset): ISO 3166-1 alpha-2
        type_ (NearbyPlaceTypeType0 | None | Unset): Airports: size class
        scheduled_service (bool | None | Unset): Airports: scheduled airline service
        population (int | None | Unset): Residents (GeoNames)
        position_precision (None | str | Unset): city: its town's point
    """

    name: str
    category: str
    lat: float
    lon: float
    distance_m: float
    code: None | str | Unset = UNSET
    country_code: None | str | Unset = UNSET
    type_: NearbyPlaceTypeType0 | None | Unset = UNSET
    scheduled_service: bool | None | Unset = UNSET
    population: int | None | Unset = UNSET
    position_precision: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        category = self.category

        lat = self.lat

        lon = self.lon

        distance_m = self.distance_m

        code: None | str | Unset
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        country_code: None | str | Unset
        if isinstance(self.country_code, Unset):
            country_code = UNSET
        else:
            country_code = self.country_code

        type_: None | str | Unset
        if isinstance(self.type_, Unset):
            type_ = UNSET
        elif isinstance(self.type_, NearbyPlaceTypeType0):
            type_ = self.type_.value
        else:
            type_ = self.type_

        scheduled_service: bool | None | Unset
        if isinstance(self.scheduled_service, Unset):
            scheduled_service = UNSET
        else:
            scheduled_service = self.scheduled_service

        population: int | None | Unset
        if isinstance(self.population, Unset):
            population = UNSET
        else:
            population = self.population

        position_precision: None | str | Unset
        if isinstance(self.position_precision, Unset):
            position_precision = UNSET
        else:
            position_precision = self.position_precision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "category": category,
                "lat": lat,
                "lon": lon,
                "distanceM": distance_m,
            }
        )
        if code is not UNSET:
            field_dict["code"] = code
        if country_code is not UNSET:
            field_dict["countryCode"] = country_code
        if type_ is not UNSET:
            field_dict["type"] = type_
        if scheduled_service is not UNSET:
            field_dict["scheduledService"] = scheduled_service
        if population is not UNSET:
            field_dict["population"] = population
        if position_precision is not UNSET:
            field_dict["positionPrecision"] = position_precision

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        category = d.pop("category")

        lat = d.pop("lat")

        lon = d.pop("lon")

        distance_m = d.pop("distanceM")

        def _parse_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        code = _parse_code(d.pop("code", UNSET))

        def _parse_country_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        country_code = _parse_country_code(d.pop("countryCode", UNSET))

        def _parse_type_(data: object) -> NearbyPlaceTypeType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_0 = NearbyPlaceTypeType0(data)

                return type_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NearbyPlaceTypeType0 | None | Unset, data)

        type_ = _parse_type_(d.pop("type", UNSET))

        def _parse_scheduled_service(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        scheduled_service = _parse_scheduled_service(d.pop("scheduledService", UNSET))

        def _parse_population(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        population = _parse_population(d.pop("population", UNSET))

        def _parse_position_precision(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        position_precision = _parse_position_precision(
            d.pop("positionPrecision", UNSET)
        )

        nearby_place = cls(
            name=name,
            category=category,
            lat=lat,
            lon=lon,
            distance_m=distance_m,
            code=code,
            country_code=country_code,
            type_=type_,
            scheduled_service=scheduled_service,
            population=population,
            position_precision=position_precision,
        )

        nearby_place.additional_properties = d
        return nearby_place

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
