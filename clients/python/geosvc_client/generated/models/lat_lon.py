from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="LatLon")


@_attrs_define
class LatLon:
    """
    Attributes:
        lat (float): Latitude
        lon (float): Longitude
    """

    lat: float
    lon: float

    def to_dict(self) -> dict[str, Any]:
        lat = self.lat

        lon = self.lon

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "lat": lat,
                "lon": lon,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        lat = d.pop("lat")

        lon = d.pop("lon")

        lat_lon = cls(
            lat=lat,
            lon=lon,
        )

        return lat_lon
