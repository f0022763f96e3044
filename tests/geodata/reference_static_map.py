"""static_map's renderer as it was before its caches (commit 5293224), pinned for
tests/geodata/test_static_map_pixels.py: whatever the renderer caches or skips, every
pixel of a map must stay what this code draws for the same view. Do not optimise it.

Since issue 42 the layers of GSHHG's coast (land; border lines clipped to it; zoom 9 on)
are drawn here too, in the renderer's order, and the rules of where names go
(app/geodata/rendering/labels.py: countries, capitals first, markers' labels kept clear)
are shared: what stays pinned here is what the caches must not change, the rings drawn
and the places found in view."""

from __future__ import annotations

import dataclasses
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw, ImageFont

from app.geodata.indices.store import (
    LAYER_BORDER,
    LAYER_COUNTRY,
    LAYER_ISLAND,
    LAYER_LAKE,
    LAYER_LAND,
    LAYER_RIVER,
    LAYER_STATE,
    LAYER_STATE_LINE,
    level_for_zoom,
)
from app.geodata.rendering import labels, map_image
from app.geodata.rendering.labels import font
from app.geodata.rendering.mercator import lonlat_to_world, world_x, world_y
from app.geodata.rendering.view import View

OCEAN = (170, 211, 223)
BEYOND = (255, 255, 255)
LAND = (242, 239, 233)
COUNTRY_BORDER = (150, 130, 150)
STATE_BORDER = (190, 180, 190)
LABEL = (40, 40, 40)
HALO = (255, 255, 255)

MARKER_RADIUS = 7
LABEL_CANDIDATES = 300  # most populous places in view considered for a label

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


class Names(Protocol):
    def __getitem__(self, index: int, /) -> str: ...


@dataclass(frozen=True)
class Place:
    name: str
    lat: float
    lon: float


@dataclass(frozen=True)
class MapMarker:
    lat: float
    lon: float
    color: str  # "#rrggbb"
    label: str | None = None


class Basemap:
    """The pre-projected rings and the places that can be labelled (most populous first)."""

    def __init__(
        self,
        arrays: Mapping[str, npt.NDArray[np.generic]],
        place_lat: npt.NDArray[np.float64],
        place_lon: npt.NDArray[np.float64],
        capitals: npt.ArrayLike = (),
    ) -> None:
        self.xy = np.asarray(arrays["bm_xy"], dtype=np.float64)
        self.offsets = np.asarray(arrays["bm_ring_off"])
        self.bbox = np.asarray(arrays["bm_ring_bbox"])
        self.layer = np.asarray(arrays["bm_ring_layer"])
        self.level = np.asarray(arrays["bm_ring_level"])
        self.place_x, self.place_y = lonlat_to_world(place_lon, place_lat)
        self.capitals = np.asarray(capitals, dtype=np.intp)


def render(
    basemap: Basemap,
    view: View,
    markers: Sequence[MapMarker],
    place_names: Names | None,
    attribution: str,
    countries: labels.Countries | None = None,
) -> bytes:
    image = Image.new("RGB", (view.width, view.height), OCEAN)
    draw = ImageDraw.Draw(image)
    _blank_beyond_the_world(image, view)
    for shift in _world_copies(view):
        _draw_rings(draw, basemap, view, shift, LAYER_COUNTRY, fill=LAND, outline=COUNTRY_BORDER)
        _draw_rings(draw, basemap, view, shift, LAYER_LAND, fill=LAND, outline=LAND)
    for shift in _world_copies(view):
        _draw_rings(
            draw, basemap, view, shift, LAYER_BORDER, fill=None, outline=COUNTRY_BORDER, width=1
        )
    for shift in _world_copies(view):
        _draw_rings(draw, basemap, view, shift, LAYER_STATE, fill=None, outline=STATE_BORDER)
        _draw_rings(
            draw, basemap, view, shift, LAYER_STATE_LINE, fill=None, outline=STATE_BORDER, width=1
        )
    for shift in _world_copies(view):
        _draw_rings(draw, basemap, view, shift, LAYER_LAKE, fill=OCEAN, outline=OCEAN)
        _draw_rings(draw, basemap, view, shift, LAYER_ISLAND, fill=LAND, outline=LAND)
    river_width = 2 if view.zoom >= 9 else 1
    for shift in _world_copies(view):
        _draw_rings(
            draw, basemap, view, shift, LAYER_RIVER, fill=None, outline=OCEAN, width=river_width
        )
    taken: list[tuple[float, float, float, float]] = []
    for marker in markers:
        taken.append(_marker_box(view, marker))
    if place_names is not None:
        candidates = _places_in_view(basemap, view)
        labels.place_labels(image, draw, view, basemap, candidates, place_names, countries, taken)
    for marker in markers:
        _draw_marker(draw, view, marker)
    _draw_attribution(draw, view, attribution)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=6)
    return buffer.getvalue()


def _blank_beyond_the_world(image: Image.Image, view: View) -> None:
    """White past the world's edges: above and below it, and beside it where the world is
    narrower than the image (drawn once; issue 52)."""
    pixels = np.asarray(image).copy()
    left, top = view.to_pixel(0.0, 0.0)
    right, bottom = view.to_pixel(1.0, 1.0)
    pixels[: max(0, math.floor(top)), :] = BEYOND
    pixels[max(0, math.ceil(bottom)) :, :] = BEYOND
    if view.scale < view.width:
        pixels[:, : max(0, math.floor(left))] = BEYOND
        pixels[:, max(0, math.ceil(right)) :] = BEYOND
    image.paste(Image.fromarray(pixels))


def _world_copies(view: View) -> range:
    if view.scale < view.width:
        return range(0, 1)
    x0, _y0, x1, _y1 = view.world_bounds()
    return range(math.floor(x0), math.floor(x1) + 1)


def _draw_rings(
    draw: ImageDraw.ImageDraw,
    basemap: Basemap,
    view: View,
    shift: int,
    layer: int,
    *,
    fill: tuple[int, int, int] | None,
    outline: tuple[int, int, int],
    width: int = 0,
) -> None:
    """Rings (width 0: closed), or open lines `width` wide."""
    x0, y0, x1, y1 = view.world_bounds()
    x0, x1 = x0 - shift, x1 - shift
    box = basemap.bbox
    visible = np.nonzero(
        (basemap.layer == layer)
        & (basemap.level == level_for_zoom(view.zoom))
        & (box[:, 0] <= x1)
        & (box[:, 2] >= x0)
        & (box[:, 1] <= y1)
        & (box[:, 3] >= y0)
    )[0]
    scale = view.scale
    origin_x = view.width / 2 - (view.cx - shift) * scale
    origin_y = view.height / 2 - view.cy * scale
    for ring in visible:
        start, end = int(basemap.offsets[ring]), int(basemap.offsets[ring + 1])
        points = np.rint(basemap.xy[start:end] * scale + (origin_x, origin_y)).astype(np.int64)
        keep = np.ones(len(points), dtype=bool)
        keep[1:] = np.any(points[1:] != points[:-1], axis=1)
        points = points[keep]
        if len(points) < (2 if width else 3):
            continue
        flat = points.ravel().tolist()
        if fill is not None:
            draw.polygon(flat, fill=fill, outline=outline)
        elif width:
            draw.line(flat, fill=outline, width=width)
        else:
            draw.line(flat + flat[:2], fill=outline, width=1)


def _places_in_view(basemap: Basemap, view: View) -> list[tuple[int, int]]:
    x0, y0, x1, y1 = view.world_bounds()
    candidates: list[tuple[int, int]] = []  # (place, world copy); places are most populous first
    for shift in _world_copies(view):
        in_view = np.nonzero(
            (basemap.place_x + shift >= x0)
            & (basemap.place_x + shift <= x1)
            & (basemap.place_y >= y0)
            & (basemap.place_y <= y1)
        )[0][:LABEL_CANDIDATES]
        candidates.extend((int(i), shift) for i in in_view)
    return sorted(candidates)[:LABEL_CANDIDATES]


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _marker_pixel(view: View, marker: MapMarker) -> tuple[float, float]:
    x, y = world_x(marker.lon), world_y(marker.lat)
    x = min((x - 1.0, x, x + 1.0), key=lambda c: abs(c - view.cx))
    return view.to_pixel(x, y)


def marker_pixel(view: View, lat: float, lon: float) -> tuple[int, int]:
    """Where a marker at (lat, lon) is drawn, in integer pixels."""
    px, py = _marker_pixel(view, MapMarker(lat=lat, lon=lon, color="#000000"))
    return round(px), round(py)


def _marker_box(view: View, marker: MapMarker) -> tuple[float, float, float, float]:
    return map_image.marker_box(view, map_image.MapMarker(*dataclasses.astuple(marker)))


def _draw_marker(draw: ImageDraw.ImageDraw, view: View, marker: MapMarker) -> None:
    px, py = marker_pixel(view, marker.lat, marker.lon)
    r = MARKER_RADIUS
    draw.ellipse((px - r - 2, py - r - 2, px + r + 2, py + r + 2), fill=HALO)
    draw.ellipse((px - r, py - r, px + r, py + r), fill=marker.color)
    if marker.label:
        draw.text(
            (px + r + 4, py - 7),
            marker.label,
            font=font(12),
            fill=LABEL,
            stroke_width=2,
            stroke_fill=HALO,
        )


def _draw_attribution(draw: ImageDraw.ImageDraw, view: View, text: str) -> None:
    attribution_font = font(9)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=attribution_font)
    width, height = right - left, bottom - top
    x = max(0, view.width - width - 4)
    y = view.height - height - 4
    draw.rectangle((x - 2, y - 2, view.width, view.height), fill=(255, 255, 255))
    draw.text((x - left, y - top), text, font=attribution_font, fill=(60, 60, 60))
