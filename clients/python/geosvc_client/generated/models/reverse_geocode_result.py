from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.reverse_geocode_result_kind import ReverseGeocodeResultKind
from ..models.reverse_geocode_result_water_type_0 import ReverseGeocodeResultWaterType0
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.nearest_postal_code import NearestPostalCode


T = TypeVar("T", bound="ReverseGeocodeResult")


@_attrs_define
class ReverseGeocodeResult:
    """
    Attributes:
        name (str): The place's name
        label (str): Name, region and country
        kind (ReverseGeocodeResultKind): admin1: state or province; poi: landmark
        lat (float): The place's centre
        lon (float): Longitude
        distance_km (float): To the place's centre
        source (str): Credit to show
        dataset (str): Data release
        country_code (None | str | Unset): The point's, ISO alpha-2
        country (None | str | Unset): The point's country
        admin1 (None | str | Unset): State, province or region
        admin2 (None | str | Unset): County or district
        county_fips (None | str | Unset): US county FIPS
        postal_code (None | str | Unset): US ZIP whose area holds the point
        postal_code_basis (None | str | Unset): containment, address, estimate or nearest_centre
        nearest_postal_code (NearestPostalCode | None | Unset): First candidate
        postal_code_candidates (list[NearestPostalCode] | Unset): Not areas; US: likeliest first
        postal_code_uncertain (bool | None | Unset): First may be wrong
        warnings (list[str] | Unset): What it cannot be sure of
        at_sea (bool | Unset): Past 22 km of land: no country or admin Default: False.
        on_water (bool | Unset): On a lake or sea (atSea too) Default: False.
        water (None | ReverseGeocodeResultWaterType0 | Unset): When onWater
        nearest_only (bool | Unset): Not in the place, only nearest it Default: False.
    """

    name: str
    label: str
    kind: ReverseGeocodeResultKind
    lat: float
    lon: float
    distance_km: float
    source: str
    dataset: str
    country_code: None | str | Unset = UNSET
    country: None | str | Unset = UNSET
    admin1: None | str | Unset = UNSET
    admin2: None | str | Unset = UNSET
    county_fips: None | str | Unset = UNSET
    postal_code: None | str | Unset = UNSET
    postal_code_basis: None | str | Unset = UNSET
    nearest_postal_code: NearestPostalCode | None | Unset = UNSET
    postal_code_candidates: list[NearestPostalCode] | Unset = UNSET
    postal_code_uncertain: bool | None | Unset = UNSET
    warnings: list[str] | Unset = UNSET
    at_sea: bool | Unset = False
    on_water: bool | Unset = False
    water: None | ReverseGeocodeResultWaterType0 | Unset = UNSET
    nearest_only: bool | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.nearest_postal_code import NearestPostalCode

        name = self.name

        label = self.label

        kind = self.kind.value

        lat = self.lat

        lon = self.lon

        distance_km = self.distance_km

        source = self.source

        dataset = self.dataset

        country_code: None | str | Unset
        if isinstance(self.country_code, Unset):
            country_code = UNSET
        else:
            country_code = self.country_code

        country: None | str | Unset
        if isinstance(self.country, Unset):
            country = UNSET
        else:
            country = self.country

        admin1: None | str | Unset
        if isinstance(self.admin1, Unset):
            admin1 = UNSET
        else:
            admin1 = self.admin1

        admin2: None | str | Unset
        if isinstance(self.admin2, Unset):
            admin2 = UNSET
        else:
            admin2 = self.admin2

        county_fips: None | str | Unset
        if isinstance(self.county_fips, Unset):
            county_fips = UNSET
        else:
            county_fips = self.county_fips

        postal_code: None | str | Unset
        if isinstance(self.postal_code, Unset):
            postal_code = UNSET
        else:
            postal_code = self.postal_code

        postal_code_basis: None | str | Unset
        if isinstance(self.postal_code_basis, Unset):
            postal_code_basis = UNSET
        else:
            postal_code_basis = self.postal_code_basis

        nearest_postal_code: dict[str, Any] | None | Unset
        if isinstance(self.nearest_postal_code, Unset):
            nearest_postal_code = UNSET
        elif isinstance(self.nearest_postal_code, NearestPostalCode):
            nearest_postal_code = self.nearest_postal_code.to_dict()
        else:
            nearest_postal_code = self.nearest_postal_code

        postal_code_candidates: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.postal_code_candidates, Unset):
            postal_code_candidates = []
            for postal_code_candidates_item_data in self.postal_code_candidates:
                postal_code_candidates_item = postal_code_candidates_item_data.to_dict()
                postal_code_candidates.append(postal_code_candidates_item)

        postal_code_uncertain: bool | None | Unset
        if isinstance(self.postal_code_uncertain, Unset):
            postal_code_uncertain = UNSET
        else:
            postal_code_uncertain = self.postal_code_uncertain

        warnings: list[str] | Unset = UNSET
        if not isinstance(self.warnings, Unset):
            warnings = self.warnings

        at_sea = self.at_sea

        on_water = self.on_water

        water: None | str | Unset
        if isinstance(self.water, Unset):
            water = UNSET
        elif isinstance(self.water, ReverseGeocodeResultWaterType0):
            water = self.water.value
        else:
            water = self.water

        nearest_only = self.nearest_only

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "label": label,
                "kind": kind,
                "lat": lat,
                "lon": lon,
                "distanceKm": distance_km,
                "source": source,
                "dataset": dataset,
            }
        )
        if country_code is not UNSET:
            field_dict["countryCode"] = country_code
        if country is not UNSET:
            field_dict["country"] = country
        if admin1 is not UNSET:
            field_dict["admin1"] = admin1
        if admin2 is not UNSET:
            field_dict["admin2"] = admin2
        if county_fips is not UNSET:
            field_dict["countyFips"] = county_fips
        if postal_code is not UNSET:
            field_dict["postalCode"] = postal_code
        if postal_code_basis is not UNSET:
            field_dict["postalCodeBasis"] = postal_code_basis
        if nearest_postal_code is not UNSET:
            field_dict["nearestPostalCode"] = nearest_postal_code
        if postal_code_candidates is not UNSET:
            field_dict["postalCodeCandidates"] = postal_code_candidates
        if postal_code_uncertain is not UNSET:
            field_dict["postalCodeUncertain"] = postal_code_uncertain
        if warnings is not UNSET:
            field_dict["warnings"] = warnings
        if at_sea is not UNSET:
            field_dict["atSea"] = at_sea
        if on_water is not UNSET:
            field_dict["onWater"] = on_water
        if water is not UNSET:
            field_dict["water"] = water
        if nearest_only is not UNSET:
            field_dict["nearestOnly"] = nearest_only

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.nearest_postal_code import NearestPostalCode

        d = dict(src_dict)
        name = d.pop("name")

        label = d.pop("label")

        kind = ReverseGeocodeResultKind(d.pop("kind"))

        lat = d.pop("lat")

        lon = d.pop("lon")

        distance_km = d.pop("distanceKm")

        source = d.pop("source")

        dataset = d.pop("dataset")

        def _parse_country_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        country_code = _parse_country_code(d.pop("countryCode", UNSET))

        def _parse_country(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        country = _parse_country(d.pop("country", UNSET))

        def _parse_admin1(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        admin1 = _parse_admin1(d.pop("admin1", UNSET))

        def _parse_admin2(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        admin2 = _parse_admin2(d.pop("admin2", UNSET))

        def _parse_county_fips(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        county_fips = _parse_county_fips(d.pop("countyFips", UNSET))

        def _parse_postal_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        postal_code = _parse_postal_code(d.pop("postalCode", UNSET))

        def _parse_postal_code_basis(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        postal_code_basis = _parse_postal_code_basis(d.pop("postalCodeBasis", UNSET))

        def _parse_nearest_postal_code(
            data: object,
        ) -> NearestPostalCode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                nearest_postal_code_type_0 = NearestPostalCode.from_dict(data)

                return nearest_postal_code_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NearestPostalCode | None | Unset, data)

        nearest_postal_code = _parse_nearest_postal_code(
            d.pop("nearestPostalCode", UNSET)
        )

        _postal_code_candidates = d.pop("postalCodeCandidates", UNSET)
        postal_code_candidates: list[NearestPostalCode] | Unset = UNSET
        if _postal_code_candidates is not UNSET:
            postal_code_candidates = []
            for postal_code_candidates_item_data in _postal_code_candidates:
                postal_code_candidates_item = NearestPostalCode.from_dict(
                    postal_code_candidates_item_data
                )

                postal_code_candidates.append(postal_code_candidates_item)

        def _parse_postal_code_uncertain(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        postal_code_uncertain = _parse_postal_code_uncertain(
            d.pop("postalCodeUncertain", UNSET)
        )

        warnings = cast(list[str], d.pop("warnings", UNSET))

        at_sea = d.pop("atSea", UNSET)

        on_water = d.pop("onWater", UNSET)

        def _parse_water(data: object) -> None | ReverseGeocodeResultWaterType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                water_type_0 = ReverseGeocodeResultWaterType0(data)

                return water_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReverseGeocodeResultWaterType0 | Unset, data)

        water = _parse_water(d.pop("water", UNSET))

        nearest_only = d.pop("nearestOnly", UNSET)

        reverse_geocode_result = cls(
            name=name,
            label=label,
            kind=kind,
            lat=lat,
            lon=lon,
            distance_km=distance_km,
            source=source,
            dataset=dataset,
            country_code=country_code,
            country=country,
            admin1=admin1,
            admin2=admin2,
            county_fips=county_fips,
            postal_code=postal_code,
            postal_code_basis=postal_code_basis,
            nearest_postal_code=nearest_postal_code,
            postal_code_candidates=postal_code_candidates,
            postal_code_uncertain=postal_code_uncertain,
            warnings=warnings,
            at_sea=at_sea,
            on_water=on_water,
            water=water,
            nearest_only=nearest_only,
        )

        reverse_geocode_result.additional_properties = d
        return reverse_geocode_result

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
