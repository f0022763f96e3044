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

# A fit goes as far as the basemap's detail: from zoom 11 the coast, lakes and their
# islands are GSHHG's full resolution (0.1 km), built for zoom 12 (docs/DATA.md).
FIT_MAX_ZOOM = 12
DEFAULT_ZOOM = 12  # a centre alone: a town-sized view
FIT_MARGIN_PX = 10  # between the edges and the nearest symbol (marker, label, path)
ATTRIBUTION_PX = 14  # the credit line's strip along the bottom


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

    @property
    def whole_world(self) -> bool:
        """Whether the world is narrower than the image: it is drawn once, in the middle
        (a copy each side would show every place two or three times)."""
        return self.scale < self.width

    def center_lonlat(self) -> tuple[float, float]:
        return world_to_lon(self.cx - math.floor(self.cx)), world_to_lat(self.cy)


def _clamp_cy(cy: float, zoom: int, height: int) -> float:
    half = height / 2 / world_pixels(zoom)
    if half >= 0.5:
        return 0.5
    return min(max(cy, half), 1.0 - half)


@dataclass(frozen=True)
class Reach:
    """How far a symbol drawn at a point reaches beyond it, in pixels (a marker's disc and
    label, half a path's width): a fit keeps all of it inside the margin."""

    left: float = 0.0
    top: float = 0.0
    right: float = 0.0
    bottom: float = 0.0


def path_xs(lons: Sequence[float]) -> list[float]:
    """World x of a path's points, each step the short way round (across the antimeridian
    when that is shorter): x may leave [0, 1]."""
    xs: list[float] = []
    for lon in lons:
        x = world_x(lon)
        xs.append(_near(x, xs[-1]) if xs else x)
    return xs


def fit(
    points: Sequence[tuple[float, float]],
    *,
    width: int,
    height: int,
    center: tuple[float, float] | None = None,
    zoom: int | None = None,
    bbox: tuple[float, float, float, float] | None = None,
    reach: Sequence[Reach] = (),
    path: Sequence[tuple[float, float]] = (),
    path_reach: float = 0.0,
) -> View:
    """A view of `points` ((lat, lon) pairs, each with its `reach` if given), the `path`
    ((lat, lon) pairs), `bbox` (west, south, east, north; west > east crosses the
    antimeridian) and/or `center` at `zoom`; what is None gets fitted, leaving every point
    with its reach at least FIT_MARGIN_PX inside the edges (the attribution's strip too)."""
    reaches = list(reach) + [Reach()] * (len(points) - len(reach))
    xs, ys = _world_points(points, bbox, path)
    reaches += [Reach(path_reach, path_reach, path_reach, path_reach)] * len(path)
    reaches += [Reach()] * (len(xs) - len(reaches))  # the bbox's corners
    if center is not None:
        cx, cy = world_x(center[1]), world_y(center[0])
        if xs:
            cx = _near(cx, (min(xs) + max(xs)) / 2)
    if zoom is None and not xs:
        zoom = DEFAULT_ZOOM
    elif zoom is None:
        zoom = _fit_zoom(xs, ys, reaches, width, height, (cx, cy) if center else None)
    if center is None:
        cx, cy = _middle(xs, ys, reaches, world_pixels(zoom))
    if world_pixels(zoom) < width:
        cx = 0.5  # the whole world, once: see View.whole_world
    return View(cx=cx, cy=_clamp_cy(cy, zoom, height), zoom=zoom, width=width, height=height)


def _world_points(
    points: Sequence[tuple[float, float]],
    bbox: tuple[float, float, float, float] | None,
    path: Sequence[tuple[float, float]],
) -> tuple[list[float], list[float]]:
    """World x and y of the points, then the path's, then the bbox's corners, each point
    in the world copy that keeps the set narrowest."""
    marks = [world_x(lon) for _lat, lon in points]
    line = path_xs([lon for _lat, lon in path])
    ys = [world_y(lat) for lat, _lon in points] + [world_y(lat) for lat, _lon in path]
    if bbox is not None:
        west, south, east, north = bbox
        box = [world_x(west), world_x(east) + (1.0 if west > east else 0.0)]
        middle = sum(box) / 2
        marks = [_near(x, middle) for x in marks]
        if line:
            line = _shifted(line, middle)
        return marks + line + box, ys + [world_y(south), world_y(north)]
    if not line:
        plain = marks
        shifted = [x + 1.0 if x < 0.5 else x for x in marks]
    else:
        middle = (min(line) + max(line)) / 2
        plain = marks + line
        shifted = [_near(x, middle) for x in marks] + line
    if not plain:
        return [], ys
    narrowest = min((plain, shifted), key=lambda xs: max(xs) - min(xs))
    return narrowest, ys


def _shifted(line: list[float], reference: float) -> list[float]:
    """The path moved by whole worlds so its middle is nearest `reference`."""
    middle = (min(line) + max(line)) / 2
    offset = round(reference - middle)
    return [x + offset for x in line]


def _middle(
    xs: Sequence[float], ys: Sequence[float], reaches: Sequence[Reach], scale: float
) -> tuple[float, float]:
    """The centre of the points' pixel extent at `scale`, the attribution strip left out."""
    if not xs:
        return 0.5, 0.5
    left, top, right, bottom = _pixel_extent(xs, ys, reaches, scale)
    return (left + right) / 2 / scale, (top + bottom + ATTRIBUTION_PX) / 2 / scale


def _fit_zoom(
    xs: Sequence[float],
    ys: Sequence[float],
    reaches: Sequence[Reach],
    width: int,
    height: int,
    center: tuple[float, float] | None,
) -> int:
    """The highest zoom, up to FIT_MAX_ZOOM, at which everything fits with its reach and
    margin; else the highest at which the bare points do; else 0."""
    bare = [Reach()] * len(reaches)
    for candidates in (reaches, bare):
        for zoom in range(FIT_MAX_ZOOM, -1, -1):
            if _fits(xs, ys, candidates, width, height, center, world_pixels(zoom)):
                return zoom
    return 0


def _fits(
    xs: Sequence[float],
    ys: Sequence[float],
    reaches: Sequence[Reach],
    width: int,
    height: int,
    center: tuple[float, float] | None,
    scale: float,
) -> bool:
    room_w = width - 2 * FIT_MARGIN_PX
    room_h = height - 2 * FIT_MARGIN_PX - ATTRIBUTION_PX
    left, top, right, bottom = _pixel_extent(xs, ys, reaches, scale)
    if center is None:
        return right - left <= room_w and bottom - top <= room_h
    cx, cy = center[0] * scale, center[1] * scale
    half_w, half_h = width / 2 - FIT_MARGIN_PX, height / 2 - FIT_MARGIN_PX
    return (
        max(cx - left, right - cx) <= half_w
        and cy - top <= half_h
        and bottom - cy <= half_h - ATTRIBUTION_PX
    )


def _pixel_extent(
    xs: Sequence[float], ys: Sequence[float], reaches: Sequence[Reach], scale: float
) -> tuple[float, float, float, float]:
    """Left, top, right and bottom of the points with their reach, in pixels at `scale`."""
    left = min(x * scale - r.left for x, r in zip(xs, reaches, strict=True))
    right = max(x * scale + r.right for x, r in zip(xs, reaches, strict=True))
    top = min(y * scale - r.top for y, r in zip(ys, reaches, strict=True))
    bottom = max(y * scale + r.bottom for y, r in zip(ys, reaches, strict=True))
    return left, top, right, bottom


def _near(x: float, reference: float) -> float:
    """x, or its copy one world away, whichever is closer to reference."""
    return min((x - 1.0, x, x + 1.0), key=lambda c: abs(c - reference))
