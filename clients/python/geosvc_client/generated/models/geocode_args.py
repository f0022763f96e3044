from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="GeocodeArgs")


@_attrs_define
class GeocodeArgs:
    """
    Attributes:
        query (str): A place's name, postal code, airport code or address
        country (None | str | Unset): Only results in this country (ISO 3166-1 alpha-2 code)
        limit (int | Unset): At most this many results Default: 5.
    """

    query: str
    country: None | str | Unset = UNSET
    limit: int | Unset = 5

    def to_dict(self) -> dict[str, Any]:
        query = self.query

        country: None | str | Unset
        if isinstance(self.country, Unset):
            country = UNSET
        else:
            country = self.country

        limit = self.limit

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "query": query,
            }
        )
        if country is not UNSET:
            field_dict["country"] = country
        if limit is not UNSET:
            field_dict["limit"] = limit

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        query = d.pop("query")

        def _parse_country(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        country = _parse_country(d.pop("country", UNSET))

        limit = d.pop("limit", UNSET)

        geocode_args = cls(
            query=query,
            country=country,
            limit=limit,
        )

        return geocode_args
