"""Draw a static map with Pillow: vector basemap, place labels, markers, attribution."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from PIL import Image, ImageDraw

from app.geodata.indices.store import (
    LAYER_BORDER,
    LAYER_COUNTRY,
    LAYER_ISLAND,
    LAYER_LAKE,
    LAYER_LAND,
    LAYER_RIVER,
    LAYER_STATE,
    LAYER_STATE_LINE,
)
from app.geodata.rendering import png
from app.geodata.rendering.area_fill import AreaFill
from app.geodata.rendering.basemap import Basemap
from app.geodata.rendering.labels import (
    HALO,
    LABEL,
    Box,
    Countries,
    Names,
    font,
    place_labels,
    world_copies,
)
from app.geodata.rendering.mercator import world_x, world_y
from app.geodata.rendering.view import Reach, View, path_xs

OCEAN = (170, 211, 223)
BEYOND = (255, 255, 255)  # past the world's edges
LAND = (242, 239, 233)
COUNTRY_BORDER = (150, 130, 150)
STATE_BORDER = (190, 180, 190)

RIVER_WIDE, RIVER_WIDE_ZOOM = 2, 9  # rivers are 2 px wide from zoom 9

MARKER_RADIUS = 7
LABEL_CANDIDATES = 300  # most populous places in view considered for a label


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


@dataclass(frozen=True)
class MapPath:
    points: Sequence[tuple[float, float]]  # (lat, lon)
    color: str  # "#rrggbb"
    width: int


def render(
    basemap: Basemap,
    view: View,
    markers: Sequence[MapMarker],
    place_names: Names | None,
    attribution: str,
    path: MapPath | None = None,
    countries: Countries | None = None,
    taken: list[Box] | None = None,
    areas: AreaFill | None = None,
) -> bytes:
    """The map as a PNG; `taken` (if given) receives the boxes of the markers and of the
    names drawn; `areas` is a choropleth drawn over the land, its legend in a corner."""
    image = draw_map(
        basemap, view, markers, place_names, attribution, path, countries, taken, areas
    )
    return png.encode_rgb(image)


def draw_map(
    basemap: Basemap,
    view: View,
    markers: Sequence[MapMarker],
    place_names: Names | None,
    attribution: str | None,
    path: MapPath | None = None,
    countries: Countries | None = None,
    taken: list[Box] | None = None,
    areas: AreaFill | None = None,
) -> Image.Image:
    """The map as an RGB image; no credit line when `attribution` is None (map tiles: the
    map that shows them credits the data once)."""
    image = Image.new("RGB", (view.width, view.height), OCEAN)
    draw = ImageDraw.Draw(image)
    _blank_beyond_the_world(draw, view)
    # Up to zoom 8 Natural Earth's countries, their outlines the borders (and the coast);
    # from zoom 9 GSHHG's land in pieces, with the borders as lines clipped to it.
    for shift in world_copies(view):
        for polygon in basemap.polygons(view, shift, LAYER_COUNTRY):
            draw.polygon(polygon, fill=LAND, outline=COUNTRY_BORDER)
        for polygon in basemap.polygons(view, shift, LAYER_LAND):
            draw.polygon(polygon, fill=LAND, outline=LAND)
    if areas is not None:  # over the land, then the country outlines it covered again
        areas.fill(image, draw, view)
        for shift in world_copies(view):
            for polygon in basemap.polygons(view, shift, LAYER_COUNTRY):
                draw.line(polygon + polygon[:2], fill=COUNTRY_BORDER, width=1)
    for shift in world_copies(view):
        for line in basemap.polygons(view, shift, LAYER_BORDER, min_points=2):
            draw.line(line, fill=COUNTRY_BORDER, width=1)
    for shift in world_copies(view):
        for polygon in basemap.polygons(view, shift, LAYER_STATE):
            draw.line(polygon + polygon[:2], fill=STATE_BORDER, width=1)
        for line in basemap.polygons(view, shift, LAYER_STATE_LINE, min_points=2):
            draw.line(line, fill=STATE_BORDER, width=1)
    _draw_water(draw, basemap, view)
    taken = [] if taken is None else taken
    taken.extend(marker_box(view, marker) for marker in markers)
    if place_names is not None:
        candidates: list[tuple[int, int]] = []  # (place, world copy), most populous first
        for shift in world_copies(view):
            in_view = basemap.places_in_view(view, shift, LABEL_CANDIDATES)
            candidates.extend((int(i), shift) for i in in_view)
        candidates = sorted(candidates)[:LABEL_CANDIDATES]
        place_labels(image, draw, view, basemap, candidates, place_names, countries, taken)
    if path is not None and len(path.points) >= 2:
        _draw_path(draw, view, path)
    for marker in markers:
        _draw_marker(draw, view, marker)
    if areas is not None:
        areas.draw_legend(draw, view)
    if attribution is not None:
        _draw_attribution(draw, view, attribution)
    return image


def _blank_beyond_the_world(draw: ImageDraw.ImageDraw, view: View) -> None:
    """Where the image reaches past the world's edges (zoom 0 and 1 at large sizes: the
    world drawn once), a plain colour that is not the sea's."""
    left, top = view.to_pixel(0.0, 0.0)
    right, bottom = view.to_pixel(1.0, 1.0)
    boxes = [
        (0, 0, view.width, math.floor(top) - 1),
        (0, math.ceil(bottom), view.width, view.height),
    ]
    if view.whole_world:
        boxes += [
            (0, 0, math.floor(left) - 1, view.height),
            (math.ceil(right), 0, view.width, view.height),
        ]
    for x0, y0, x1, y1 in boxes:
        if x1 >= max(x0, 0) and y1 >= max(y0, 0) and x0 < view.width and y0 < view.height:
            draw.rectangle((x0, y0, x1, y1), fill=BEYOND)


def _draw_water(draw: ImageDraw.ImageDraw, basemap: Basemap, view: View) -> None:
    """Lakes in the ocean's colour over the land (and the borders through them), their
    islands back in the land's, then the rivers as lines."""
    for shift in world_copies(view):
        for polygon in basemap.polygons(view, shift, LAYER_LAKE):
            draw.polygon(polygon, fill=OCEAN, outline=OCEAN)
        for polygon in basemap.polygons(view, shift, LAYER_ISLAND):
            draw.polygon(polygon, fill=LAND, outline=LAND)
    width = RIVER_WIDE if view.zoom >= RIVER_WIDE_ZOOM else 1
    for shift in world_copies(view):
        for line in basemap.polygons(view, shift, LAYER_RIVER, min_points=2):
            draw.line(line, fill=OCEAN, width=width)


def _marker_pixel(view: View, marker: MapMarker) -> tuple[float, float]:
    x, y = world_x(marker.lon), world_y(marker.lat)
    x = min((x - 1.0, x, x + 1.0), key=lambda c: abs(c - view.cx))
    return view.to_pixel(x, y)


def marker_pixel(view: View, lat: float, lon: float) -> tuple[int, int]:
    """Where a marker at (lat, lon) is drawn, in integer pixels."""
    px, py = _marker_pixel(view, MapMarker(lat=lat, lon=lon, color="#000000"))
    return round(px), round(py)


def marker_box(view: View, marker: MapMarker) -> Box:
    """The pixels a marker covers with its halo and label: names keep off them."""
    px, py = marker_pixel(view, marker.lat, marker.lon)
    reach = marker_reach(marker)
    return (px - reach.left, py - reach.top, px + reach.right, py + reach.bottom)


def marker_reach(marker: MapMarker) -> Reach:
    """How far a marker's disc (with its halo) and label reach from its point."""
    r = MARKER_RADIUS + 2
    if not marker.label:
        return Reach(r, r, r, r)
    left, top, right, bottom = _marker_label_extent(marker.label)
    x, y = MARKER_RADIUS + 4, -7  # where the label starts, from the point
    return Reach(r, max(r, -(y + top)), max(r, x + right), max(r, y + bottom))


@lru_cache(maxsize=4096)
def _marker_label_extent(label: str) -> tuple[int, int, int, int]:
    draw = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    extent = draw.textbbox((0, 0), label, font=font(12), stroke_width=2)
    return cast(tuple[int, int, int, int], extent)


def path_reach(width: int) -> float:
    return width / 2 + 1


def marker_drawn(view: View, marker: MapMarker) -> bool:
    """Whether any of the marker's disc falls inside the image (Pillow clips the rest): a
    marker whose point is just past an edge still shows there."""
    px, py = marker_pixel(view, marker.lat, marker.lon)
    dx = max(0, -px, px - (view.width - 1))  # from the nearest pixel of the image
    dy = max(0, -py, py - (view.height - 1))
    return dx * dx + dy * dy <= MARKER_RADIUS * MARKER_RADIUS


def path_drawn(view: View, path: MapPath) -> bool:
    """Whether any of the path's line (half its width either side) falls inside the image."""
    if len(path.points) < 2:
        return False
    half = path.width / 2
    box = (-half, -half, view.width - 1 + half, view.height - 1 + half)
    return any(
        _clip(a, b, box) is not None
        for pixels in _path_copies(view, path)
        for a, b in zip(pixels, pixels[1:], strict=False)
    )


def _draw_path(draw: ImageDraw.ImageDraw, view: View, path: MapPath) -> None:
    """The path as one line, in every world copy the view shows of it."""
    for pixels in _path_copies(view, path):
        for run in _runs_in_view(pixels, view, path.width):
            draw.line(run, fill=path.color, width=path.width, joint="curve")


def _path_copies(view: View, path: MapPath) -> list[list[tuple[float, float]]]:
    """The path's points in pixels, once for each world copy whose span meets the view's."""
    xs = path_xs([lon for _lat, lon in path.points])
    ys = [world_y(lat) for lat, _lon in path.points]
    x0, _y0, x1, _y1 = view.world_bounds()
    copies = []
    shifts = range(math.floor(x0 - max(xs)), math.ceil(x1 - min(xs)) + 1)
    for shift in [0] if view.whole_world else shifts:
        if max(xs) + shift < x0 or min(xs) + shift > x1:
            continue
        copies.append([view.to_pixel(x + shift, y) for x, y in zip(xs, ys, strict=True)])
    return copies


def _runs_in_view(
    pixels: Sequence[tuple[float, float]], view: View, width: int
) -> list[list[tuple[float, float]]]:
    """The line cut to the image (and its width beyond): Pillow steps a 1 px line pixel by
    pixel, even off the image, and at zoom 12 a leg can be a million pixels long."""
    pad = width + 2
    box = (-pad, -pad, view.width + pad, view.height + pad)
    runs: list[list[tuple[float, float]]] = []
    for a, b in zip(pixels, pixels[1:], strict=False):
        clipped = _clip(a, b, box)
        if clipped is None:
            continue
        if runs and runs[-1][-1] == clipped[0]:
            runs[-1].append(clipped[1])
        else:
            runs.append(list(clipped))
    return runs


def _clip(
    a: tuple[float, float], b: tuple[float, float], box: tuple[float, float, float, float]
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The part of segment a-b inside box (Liang-Barsky), or None."""
    (x0, y0), (x1, y1) = a, b
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - box[0]), (dx, box[2] - x0), (-dy, y0 - box[1]), (dy, box[3] - y0)):
        if p == 0:
            if q < 0:
                return None
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return None
    start = a if t0 == 0.0 else (x0 + t0 * dx, y0 + t0 * dy)
    end = b if t1 == 1.0 else (x0 + t1 * dx, y0 + t1 * dy)
    return start, end


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
