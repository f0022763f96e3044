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

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.geodata.indices.store import level_for_zoom
from app.geodata.rendering.mercator import lonlat_to_world
from app.geodata.rendering.view import View

MARGIN_PX = 8  # vertices nearer the image than this are always kept

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
    ) -> None:
        self.xy = np.asarray(arrays["bm_xy"], dtype=np.float64)
        offsets = np.asarray(arrays["bm_ring_off"], dtype=np.int64)
        bbox = np.asarray(arrays["bm_ring_bbox"], dtype=np.float64)
        layers = np.asarray(arrays["bm_ring_layer"])
        levels = np.asarray(arrays["bm_ring_level"])
        self._sets: dict[tuple[int, int], _RingSet] = {}
        for layer in np.unique(layers).tolist():
            for level in np.unique(levels).tolist():
                rings = np.nonzero((layers == layer) & (levels == level))[0]
                self._sets[(layer, level)] = _RingSet(
                    starts=offsets[rings], ends=offsets[rings + 1], bbox=bbox[rings]
                )
        self.place_x, self.place_y = lonlat_to_world(place_lon, place_lat)

    def polygons(self, view: View, shift: int, layer: int) -> list[Flat]:
        """The layer's rings in view (the world copy `shift` worlds away), in drawing order,
        in integer pixels, without repeated points; rings of fewer than 3 points left out."""
        rings = self._sets.get((layer, level_for_zoom(view.zoom)))
        if rings is None:
            return []
        x0, y0, x1, y1 = view.world_bounds()
        x0, x1 = x0 - shift, x1 - shift
        box = rings.bbox
        visible = np.nonzero(
            (box[:, 0] <= x1) & (box[:, 2] >= x0) & (box[:, 1] <= y1) & (box[:, 3] >= y0)
        )[0]
        if len(visible) == 0:
            return []
        scale = view.scale
        origin = (view.width / 2 - (view.cx - shift) * scale, view.height / 2 - view.cy * scale)
        starts, lengths = rings.starts[visible], rings.ends[visible] - rings.starts[visible]
        first = np.cumsum(lengths) - lengths  # each ring's first vertex among all in view
        index = np.arange(int(lengths.sum())) + np.repeat(starts - first, lengths)
        points = np.rint(self.xy[index] * scale + origin).astype(np.int64)
        keep = np.ones(len(points), dtype=bool)
        keep[1:] = np.any(points[1:] != points[:-1], axis=1)
        keep[first] = True
        ring_of = np.repeat(np.arange(len(visible)), lengths)[keep]
        points = points[keep]
        counts = np.bincount(ring_of, minlength=len(visible))
        points, counts = without_off_view_runs(points, counts, view.width, view.height)
        flat = points.ravel().tolist()
        polygons: list[Flat] = []
        end = 0
        for count in counts.tolist():
            start, end = end, end + count
            if count >= 3:
                polygons.append(flat[2 * start : 2 * end])
        return polygons


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
