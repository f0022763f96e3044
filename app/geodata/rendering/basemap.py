"""The basemap's rings in a view, as the pixel polygons Pillow draws.

What does not change between calls is prepared once: the rings of each layer and level
of detail with their bounding boxes, and the places' Web Mercator positions. Per call,
the rings in view are projected together (one numpy pass, not one per ring), and each
ring loses the vertices that cannot change a pixel: the inner vertices of a run lying
wholly beyond one edge of the image (more than MARGIN_PX beyond it). At zoom 9 a
600x400 view inside the United States drew its 22,000-vertex outline; now about 20.

Why the pixels stay the same (Pillow's polygon fill, libImaging/Draw.c, fills each row
between pairs of sorted edge crossings, clipped to the image): a run's first and last
vertices stay, so a chord between them replaces the run; both lie in the same open
half-plane beyond the image, so neither draws a visible outline pixel, and on any row
the crossings of run and chord differ by an even number, all beyond that edge: the pairs
over the image are the same. Pillow also nudges a crossing where two edges end on one
pixel, after the first earlier edge ending there, and scans only the rows between the
ring's extremes; so a ring's first, last, highest and lowest vertices stay, and so do
the vertices (with both their edges) on a pixel the ring visits more than once.
tests/geodata/test_basemap_runs.py draws random rings both ways; test_static_map_pixels.py
compares whole maps with the renderer as it was.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.geodata.indices.store import level_for_zoom
from app.geodata.rendering.mercator import lonlat_to_world
from app.geodata.rendering.view import View

MARGIN_PX = 8  # vertices nearer the image than this are always kept
PLACE_GRID = 256  # cells per side of the world in the places' index
GRID_CELLS_MAX = 4096  # a view over more cells scans the places, most populous first

Flat = list[int]  # x0, y0, x1, y1, ... in pixels, as Pillow takes a polygon


@dataclass(frozen=True)
class _RingSet:
    """The rings of one layer at one level of detail."""

    starts: npt.NDArray[np.int64]  # into Basemap.xy
    ends: npt.NDArray[np.int64]
    bbox: npt.NDArray[np.float64]  # (x0, y0, x1, y1) per ring, world units


class Basemap:
    """The pre-projected rings and the places that can be labelled (most populous first)."""

    def __init__(
        self,
        arrays: Mapping[str, npt.NDArray[np.generic]],
        place_lat: npt.NDArray[np.float64],
        place_lon: npt.NDArray[np.float64],
        capitals: npt.ArrayLike = (),
    ) -> None:
        self.capitals = np.asarray(capitals, dtype=np.intp)  # places that are capitals
        self.xy = np.asarray(arrays["bm_xy"])  # float32, memory-mapped: not copied
        offsets = np.asarray(arrays["bm_ring_off"], dtype=np.int64)
        bbox = np.asarray(arrays["bm_ring_bbox"], dtype=np.float64)
        layers = np.asarray(arrays["bm_ring_layer"])
        levels = np.asarray(arrays["bm_ring_level"])
        self._sets: dict[tuple[int, int], _RingSet] = {}
        for layer in np.unique(layers).tolist():
            for level in np.unique(levels).tolist():
                rings = np.nonzero((layers == layer) & (levels == level))[0]
                if len(rings) and rings[-1] - rings[0] + 1 == len(rings):
                    # back to back (basemap_build): views of the memory-mapped arrays
                    first, end = int(rings[0]), int(rings[-1]) + 1
                    self._sets[(layer, level)] = _RingSet(
                        starts=offsets[first:end],
                        ends=offsets[first + 1 : end + 1],
                        bbox=bbox[first:end],
                    )
                    continue
                self._sets[(layer, level)] = _RingSet(
                    starts=offsets[rings], ends=offsets[rings + 1], bbox=bbox[rings]
                )
        self.place_x, self.place_y = lonlat_to_world(place_lon, place_lat)
        # The places by grid cell (row by row), most populous first within a cell.
        cell = _cells(self.place_y) * PLACE_GRID + _cells(self.place_x)
        self._places_by_cell = np.argsort(cell, kind="stable")
        self._cell_start = np.searchsorted(
            cell[self._places_by_cell], np.arange(PLACE_GRID * PLACE_GRID + 1)
        )

    def places_in_view(self, view: View, shift: int, limit: int) -> npt.NDArray[np.intp]:
        """The first `limit` places (most populous first) in view in the world copy `shift`
        worlds away: a small view reads its grid cells, a wide one the most populous places
        until it has `limit`."""
        x0, y0, x1, y1 = view.world_bounds()
        last = PLACE_GRID - 1
        # a cell more on each side: the exact test below decides
        col0, col1 = max(0, _cell_of(x0 - shift) - 1), min(last, _cell_of(x1 - shift) + 1)
        row0, row1 = max(0, _cell_of(y0) - 1), min(last, _cell_of(y1) + 1)
        if col0 > col1 or row0 > row1:
            return np.zeros(0, dtype=np.intp)
        if (col1 - col0 + 1) * (row1 - row0 + 1) <= GRID_CELLS_MAX:
            rows = np.arange(row0, row1 + 1) * PLACE_GRID
            near = np.concatenate(
                [
                    self._places_by_cell[start:end]
                    for start, end in zip(
                        self._cell_start[rows + col0].tolist(),
                        self._cell_start[rows + col1 + 1].tolist(),
                        strict=True,
                    )
                ]
            )
            near.sort()
            return near[self._in_view(near, view, shift)][:limit]
        found: list[npt.NDArray[np.intp]] = []
        start, size, count = 0, 2048, 0
        while start < len(self.place_x) and count < limit:
            chunk = np.arange(start, min(start + size, len(self.place_x)), dtype=np.intp)
            found.append(chunk[self._in_view(chunk, view, shift)])
            count += len(found[-1])
            start, size = start + size, size * 4
        return np.concatenate(found)[:limit]

    def _in_view(
        self, places: npt.NDArray[np.intp], view: View, shift: int
    ) -> npt.NDArray[np.bool_]:
        x0, y0, x1, y1 = view.world_bounds()
        x, y = self.place_x[places], self.place_y[places]
        return (x + shift >= x0) & (x + shift <= x1) & (y >= y0) & (y <= y1)

    def polygons(self, view: View, shift: int, layer: int, min_points: int = 3) -> list[Flat]:
        """The layer's rings in view (the world copy `shift` worlds away), in drawing order,
        in integer pixels, without repeated points; rings of fewer than `min_points` points
        left out (2 for a layer of lines)."""
        rings = self._sets.get((layer, level_for_zoom(view.zoom)))
        if rings is None:
            return []
        found = rings_in_view(self.xy, rings.starts, rings.ends, rings.bbox, view, shift)
        return [flat for _ring, flat in found if len(flat) >= 2 * min_points]


def rings_in_view(
    xy: npt.NDArray[np.floating],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    bbox: npt.NDArray[np.float64],
    view: View,
    shift: int,
) -> list[tuple[int, Flat]]:
    """(ring number, its polygon in integer pixels without repeated points) for every ring
    whose box meets the view (the world copy `shift` worlds away), in the rings' order."""
    x0, y0, x1, y1 = view.world_bounds()
    x0, x1 = x0 - shift, x1 - shift
    box = bbox
    visible = np.nonzero(
        (box[:, 0] <= x1) & (box[:, 2] >= x0) & (box[:, 1] <= y1) & (box[:, 3] >= y0)
    )[0]
    if len(visible) == 0:
        return []
    scale = view.scale
    origin = (view.width / 2 - (view.cx - shift) * scale, view.height / 2 - view.cy * scale)
    starts, lengths = starts[visible], ends[visible] - starts[visible]
    first = np.cumsum(lengths) - lengths  # each ring's first vertex among all in view
    index = np.arange(int(lengths.sum())) + np.repeat(starts - first, lengths)
    points = np.rint(xy[index].astype(np.float64) * scale + origin).astype(np.int64)
    keep = np.ones(len(points), dtype=bool)
    keep[1:] = np.any(points[1:] != points[:-1], axis=1)
    keep[first] = True
    ring_of = np.repeat(np.arange(len(visible)), lengths)[keep]
    points = points[keep]
    counts = np.bincount(ring_of, minlength=len(visible))
    points, counts = without_off_view_runs(points, counts, view.width, view.height)
    flat = points.ravel().tolist()
    polygons: list[tuple[int, Flat]] = []
    end = 0
    for ring, count in zip(visible.tolist(), counts.tolist(), strict=True):
        start, end = end, end + count
        polygons.append((ring, flat[2 * start : 2 * end]))
    return polygons


def _cells(world: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    return np.clip(np.floor(world * PLACE_GRID), 0, PLACE_GRID - 1).astype(np.int64)


def _cell_of(world: float) -> int:
    return math.floor(min(max(world, -1.0), 2.0) * PLACE_GRID)


def without_off_view_runs(
    points: npt.NDArray[np.int64], counts: npt.NDArray[np.int64], width: int, height: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """`points` (rings of `counts` points, back to back) without the inner vertices of runs
    lying beyond one edge of the image; a ring of fewer than 3 points is left whole (it is
    not drawn, and the caller needs its count as it was)."""
    x, y = points[:, 0], points[:, 1]
    side = np.zeros(len(points), dtype=np.int8)  # 0: near the image; else which side beyond
    side[y > height - 1 + MARGIN_PX] = 4
    side[y < -MARGIN_PX] = 3
    side[x > width - 1 + MARGIN_PX] = 2
    side[x < -MARGIN_PX] = 1
    ring_of = np.repeat(np.arange(len(counts)), counts)
    ends = np.cumsum(counts)
    starts = ends - counts
    nonempty = counts > 0
    first, last = starts[nonempty], ends[nonempty] - 1
    # Runs: stretches of one side within a ring.
    run_start = np.ones(len(points), dtype=bool)
    run_start[1:] = side[1:] != side[:-1]
    run_start[first] = True
    keep = side == 0
    keep |= run_start  # a run's first vertex ...
    keep[np.nonzero(run_start)[0][1:] - 1] = True  # ... and its last
    keep[last] = True
    # Pillow scans the rows between a ring's highest and lowest vertex.
    order = np.lexsort((x, y, ring_of))  # by ring, then row, then column
    keep[order[first]] = True
    keep[order[last]] = True
    # Where edges of a ring end on one pixel, Pillow adjusts a crossing there after the
    # first earlier edge ending on that pixel: a vertex on a pixel the ring visits more
    # than once (a closed ring's first and last, too) keeps both its edges.
    same = np.all(points[order[1:]] == points[order[:-1]], axis=1) & (
        ring_of[order[1:]] == ring_of[order[:-1]]
    )
    revisited = np.zeros(len(points), dtype=bool)
    revisited[order[1:][same]] = True
    revisited[order[:-1][same]] = True
    keep |= revisited
    keep[1:] |= revisited[:-1]
    keep[:-1] |= revisited[1:]
    keep[np.repeat(counts < 3, counts)] = True
    return points[keep], np.bincount(ring_of[keep], minlength=len(counts))
