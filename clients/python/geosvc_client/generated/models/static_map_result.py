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

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.b_box import BBox
    from ..models.lat_lon import LatLon
    from ..models.static_map_result_choropleth_type_0 import (
        StaticMapResultChoroplethType0,
    )


T = TypeVar("T", bound="StaticMapResult")


@_attrs_define
class StaticMapResult:
    """
    Attributes:
        width (int): px
        height (int): px
        center (LatLon):
        zoom (int): Zoom
        bbox (BBox):
        markers (int): Markers drawn
        bytes_ (int): PNG size
        attribution (str): Credit line
        source (str): Credit to show
        dataset (str): Data release
        warnings (list[str] | Unset): What was not drawn
        format_ (Literal['image/png'] | Unset): The image's media type Default: 'image/png'.
        choropleth (None | StaticMapResultChoroplethType0 | Unset): Legend
    """

    width: int
    height: int
    center: LatLon
    zoom: int
    bbox: BBox
    markers: int
    bytes_: int
    attribution: str
    source: str
    dataset: str
    warnings: list[str] | Unset = UNSET
    format_: Literal["image/png"] | Unset = "image/png"
    choropleth: None | StaticMapResultChoroplethType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.static_map_result_choropleth_type_0 import (
            StaticMapResultChoroplethType0,
        )

        width = self.width

        height = self.height

        center = self.center.to_dict()

        zoom = self.zoom

        bbox = self.bbox.to_dict()

        markers = self.markers

        bytes_ = self.bytes_

        attribution = self.attribution

        source = self.source

        dataset = self.dataset

        warnings: list[str] | Unset = UNSET
        if not isinstance(self.warnings, Unset):
            warnings = self.warnings

        format_ = self.format_

        choropleth: dict[str, Any] | None | Unset
        if isinstance(self.choropleth, Unset):
            choropleth = UNSET
        elif isinstance(self.choropleth, StaticMapResultChoroplethType0):
            choropleth = self.choropleth.to_dict()
        else:
            choropleth = self.choropleth

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "width": width,
                "height": height,
                "center": center,
                "zoom": zoom,
                "bbox": bbox,
                "markers": markers,
                "bytes": bytes_,
                "attribution": attribution,
                "source": source,
                "dataset": dataset,
            }
        )
        if warnings is not UNSET:
            field_dict["warnings"] = warnings
        if format_ is not UNSET:
            field_dict["format"] = format_
        if choropleth is not UNSET:
            field_dict["choropleth"] = choropleth

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.b_box import BBox
        from ..models.lat_lon import LatLon
        from ..models.static_map_result_choropleth_type_0 import (
            StaticMapResultChoroplethType0,
        )

        d = dict(src_dict)
        width = d.pop("width")

        height = d.pop("height")

        center = LatLon.from_dict(d.pop("center"))

        zoom = d.pop("zoom")

        bbox = BBox.from_dict(d.pop("bbox"))

        markers = d.pop("markers")

        bytes_ = d.pop("bytes")

        attribution = d.pop("attribution")

        source = d.pop("source")

        dataset = d.pop("dataset")

        warnings = cast(list[str], d.pop("warnings", UNSET))

        format_ = cast(Literal["image/png"] | Unset, d.pop("format", UNSET))
        if format_ != "image/png" and not isinstance(format_, Unset):
            raise ValueError(f"format must match const 'image/png', got '{format_}'")

        def _parse_choropleth(
            data: object,
        ) -> None | StaticMapResultChoroplethType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                choropleth_type_0 = StaticMapResultChoroplethType0.from_dict(data)

                return choropleth_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StaticMapResultChoroplethType0 | Unset, data)

        choropleth = _parse_choropleth(d.pop("choropleth", UNSET))

        static_map_result = cls(
            width=width,
            height=height,
            center=center,
            zoom=zoom,
            bbox=bbox,
            markers=markers,
            bytes_=bytes_,
            attribution=attribution,
            source=source,
            dataset=dataset,
            warnings=warnings,
            format_=format_,
            choropleth=choropleth,
        )

        static_map_result.additional_properties = d
        return static_map_result

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
