from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="BBox")


@_attrs_define
class BBox:
    """
    Attributes:
        west (float): Degrees
        south (float): Degrees
        east (float): Degrees
        north (float): Degrees
    """

    west: float
    south: float
    east: float
    north: float

    def to_dict(self) -> dict[str, Any]:
        west = self.west

        south = self.south

        east = self.east

        north = self.north

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "west": west,
                "south": south,
                "east": east,
                "north": north,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        west = d.pop("west")

        south = d.pop("south")

        east = d.pop("east")

        north = d.pop("north")

        b_box = cls(
            west=west,
            south=south,
            east=east,
            north=north,
        )

        return b_box
