from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.geocode_candidate_kind import GeocodeCandidateKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="GeocodeCandidate")


@_attrs_define
class GeocodeCandidate:
    """
    Attributes:
        name (str): The place's name
        label (str): Name, region and country
        kind (GeocodeCandidateKind): admin1: state or province; poi: landmark
        lat (float): Latitude
        lon (float): Longitude
        confidence (float): As in `results`
        country_code (None | str | Unset): ISO 3166-1 alpha-2
        admin1 (None | str | Unset): State, province or region
    """

    name: str
    label: str
    kind: GeocodeCandidateKind
    lat: float
    lon: float
    confidence: float
    country_code: None | str | Unset = UNSET
    admin1: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        label = self.label

        kind = self.kind.value

        lat = self.lat

        lon = self.lon

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

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "label": label,
                "kind": kind,
                "lat": lat,
                "lon": lon,
                "confidence": confidence,
            }
        )
        if country_code is not UNSET:
            field_dict["countryCode"] = country_code
        if admin1 is not UNSET:
            field_dict["admin1"] = admin1

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        label = d.pop("label")

        kind = GeocodeCandidateKind(d.pop("kind"))

        lat = d.pop("lat")

        lon = d.pop("lon")

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

        geocode_candidate = cls(
            name=name,
            label=label,
            kind=kind,
            lat=lat,
            lon=lon,
            confidence=confidence,
            country_code=country_code,
            admin1=admin1,
        )

        geocode_candidate.additional_properties = d
        return geocode_candidate

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
