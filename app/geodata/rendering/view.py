"""Which part of the Web Mercator world a map shows: centre, zoom, and the fit to points."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from app.geodata.rendering.mercator import (
    world_pixels,
    world_to_lat,
    world_to_lon,
    world_x,
    world_y,
)
from app.geodata.schemas import MAX_MAP_ZOOM

MAX_ZOOM = MAX_MAP_ZOOM  # a fit to close markers stops at the basemap's detail
DEFAULT_ZOOM = 12  # a centre alone: a town-sized view
FIT_PADDING_PX = 28  # room for marker symbols at the edges


@dataclass(frozen=True)
class View:
    cx: float  # centre, world units (x may leave [0, 1] on a map across the antimeridian)
    cy: float
    zoom: int
    width: int
    height: int

    @property
    def scale(self) -> float:
        """Pixels per world unit."""
        return world_pixels(self.zoom)

    def to_pixel(self, x: float, y: float) -> tuple[float, float]:
        return (
            (x - self.cx) * self.scale + self.width / 2,
            (y - self.cy) * self.scale + self.height / 2,
        )

    def world_bounds(self) -> tuple[float, float, float, float]:
        half_w = self.width / 2 / self.scale
        half_h = self.height / 2 / self.scale
        return self.cx - half_w, self.cy - half_h, self.cx + half_w, self.cy + half_h

    def bbox(self) -> tuple[float, float, float, float]:
        """(west, south, east, north) in degrees; west > east when it crosses the antimeridian."""
        x0, y0, x1, y1 = self.world_bounds()
        if x1 - x0 >= 1.0:
            west, east = -180.0, 180.0
        else:
            west = world_to_lon(x0 - math.floor(x0))
            east = world_to_lon(x1 - math.floor(x1))
            if east == -180.0:
                east = 180.0
        south = world_to_lat(min(1.0, y1))
        north = world_to_lat(max(0.0, y0))
        return west, south, east, north

    def center_lonlat(self) -> tuple[float, float]:
        return world_to_lon(self.cx - math.floor(self.cx)), world_to_lat(self.cy)


def _unwrap(xs: Sequence[float]) -> list[float]:
    """Shift points across the antimeridian when that makes the set narrower."""
    if not xs:
        return []
    plain = list(xs)
    shifted = [x + 1.0 if x < 0.5 else x for x in xs]
    return shifted if max(shifted) - min(shifted) < max(plain) - min(plain) else plain


def _clamp_cy(cy: float, zoom: int, height: int) -> float:
    half = height / 2 / world_pixels(zoom)
    if half >= 0.5:
        return 0.5
    return min(max(cy, half), 1.0 - half)


def fit(
    points: Sequence[tuple[float, float]],
    *,
    width: int,
    height: int,
    center: tuple[float, float] | None = None,
    zoom: int | None = None,
    bbox: tuple[float, float, float, float] | None = None,
) -> View:
    """A view of `points` ((lat, lon) pairs), `bbox` (west, south, east, north; west > east
    crosses the antimeridian) and/or `center` at `zoom`; what is None gets fitted."""
    if bbox is not None:
        west, south, east, north = bbox
        box_x = [world_x(west), world_x(east) + (1.0 if west > east else 0.0)]
        middle = sum(box_x) / 2
        xs = box_x + [_near(world_x(lon), middle) for _lat, lon in points]
        ys = [world_y(south), world_y(north)] + [world_y(lat) for lat, _lon in points]
    else:
        xs = _unwrap([world_x(lon) for _lat, lon in points])
        ys = [world_y(lat) for lat, _lon in points]
    if center is not None:
        cx, cy = world_x(center[1]), world_y(center[0])
        if xs:
            cx = _near(cx, sum(xs) / len(xs))
        span_x = 2 * max((abs(x - cx) for x in xs), default=0.0)
        span_y = 2 * max((abs(y - cy) for y in ys), default=0.0)
    else:
        cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
        span_x, span_y = max(xs) - min(xs), max(ys) - min(ys)
    if zoom is None:
        zoom = DEFAULT_ZOOM if span_x == span_y == 0 else _zoom_for(span_x, span_y, width, height)
    return View(cx=cx, cy=_clamp_cy(cy, zoom, height), zoom=zoom, width=width, height=height)


def _near(x: float, reference: float) -> float:
    """x, or its copy one world away, whichever is closer to reference."""
    return min((x - 1.0, x, x + 1.0), key=lambda c: abs(c - reference))


def _zoom_for(span_x: float, span_y: float, width: int, height: int) -> int:
    room_w = max(width - 2 * FIT_PADDING_PX, width / 2)
    room_h = max(height - 2 * FIT_PADDING_PX, height / 2)
    best = 0
    for zoom in range(MAX_ZOOM + 1):
        scale = world_pixels(zoom)
        if span_x * scale <= room_w and span_y * scale <= room_h:
            best = zoom
        else:
            break
    return best
