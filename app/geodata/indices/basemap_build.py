"""Basemap vectors for static_map: Natural Earth 1:10m country outlines and US state lines,
pre-projected to Web Mercator world units (x, y in [0, 1], y down), each ring with its
bounding box so a render only touches what is in view.

Rings are stored at several levels of detail, simplified (Douglas-Peucker, GEOS) to under
a pixel at the highest zoom of their level: a world map draws a few thousand vertices,
a city map the full 1:10m coastline near it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import shapely

from app.geodata.indices.store import (
    LAYER_COUNTRY,
    LAYER_ISLAND,
    LAYER_LAKE,
    LAYER_RIVER,
    LAYER_STATE,
    LEVEL_MAX_ZOOM,
)
from app.geodata.indices.wkb import Ring
from app.geodata.rendering.mercator import TILE_SIZE, lonlat_to_world

TOLERANCE_PX = 0.6
# A river is drawn at a level of detail when at least this long at the level's highest zoom
# (GSHHG's rivers carry no rank: length stands in for it), and never on a world map.
RIVER_MIN_PX = (0.0, 200.0, 120.0, 30.0)
RIVER_FIRST_LEVEL = 1


def basemap_arrays(
    countries: Sequence[Ring],
    states: Mapping[str, list[Ring]],
    water: Mapping[int, Sequence[Ring]] | None = None,
) -> dict[str, npt.NDArray[Any]]:
    """The rings of every layer at every level of detail; `water` maps LAYER_LAKE,
    LAYER_ISLAND (rings) and LAYER_RIVER (lines) to theirs."""
    water = water or {}
    layers = [(LAYER_COUNTRY, list(countries))]
    layers.append((LAYER_STATE, [ring for rings in states.values() for ring in rings]))
    layers += [(layer, list(water.get(layer, ()))) for layer in (LAYER_LAKE, LAYER_ISLAND)]
    packed: list[tuple[int, int, npt.NDArray[np.float64]]] = []
    for layer, rings in layers:
        projected = [_project(ring) for ring in rings if len(ring) >= 4]
        for level, top in enumerate(LEVEL_MAX_ZOOM):
            last = level == len(LEVEL_MAX_ZOOM) - 1
            tolerance = 0.0 if last else TOLERANCE_PX / (TILE_SIZE * 2.0**top)
            packed.extend((layer, level, ring) for ring in _simplify(projected, tolerance))
    lines = [_project(line) for line in water.get(LAYER_RIVER, ()) if len(line) >= 2]
    lengths = np.asarray([np.hypot(*np.diff(line, axis=0).T).sum() for line in lines])
    for level, top in enumerate(LEVEL_MAX_ZOOM):
        if level < RIVER_FIRST_LEVEL:
            continue
        scale = TILE_SIZE * 2.0**top
        long_enough = [
            line for line, n in zip(lines, lengths, strict=True) if n * scale >= RIVER_MIN_PX[level]
        ]
        last = level == len(LEVEL_MAX_ZOOM) - 1
        tolerance = 0.0 if last else TOLERANCE_PX / scale
        packed.extend(
            (LAYER_RIVER, level, line) for line in _simplify(long_enough, tolerance, min_points=2)
        )
    return _pack(packed)


def _project(ring: Ring) -> npt.NDArray[np.float64]:
    x, y = lonlat_to_world(ring[:, 0], ring[:, 1])
    return np.stack([x, y], axis=1)


def _simplify(
    rings: list[npt.NDArray[np.float64]], tolerance: float, min_points: int = 4
) -> Iterable[npt.NDArray[np.float64]]:
    if tolerance == 0.0 or not rings:
        yield from rings
        return
    simplified = shapely.simplify(
        np.array([shapely.LineString(r) for r in rings], dtype=object),
        tolerance,
        preserve_topology=False,
    )
    for geometry in simplified:
        coords = shapely.get_coordinates(geometry)
        span = coords.max(axis=0) - coords.min(axis=0) if len(coords) else np.zeros(2)
        if len(coords) >= min_points and max(span) >= tolerance * 2:  # drop specks below a pixel
            yield coords


def _pack(rings: list[tuple[int, int, npt.NDArray[np.float64]]]) -> dict[str, npt.NDArray[Any]]:
    offsets = np.zeros(len(rings) + 1, dtype=np.int64)
    np.cumsum([len(r) for _l, _v, r in rings], out=offsets[1:])
    bbox = np.asarray(
        [(r[:, 0].min(), r[:, 1].min(), r[:, 0].max(), r[:, 1].max()) for _l, _v, r in rings],
        dtype=np.float64,
    )
    return {
        "bm_xy": np.concatenate([r for _l, _v, r in rings]).astype(np.float64),
        "bm_ring_off": offsets,
        "bm_ring_bbox": bbox,
        "bm_ring_layer": np.asarray([layer for layer, _v, _r in rings], dtype=np.uint8),
        "bm_ring_level": np.asarray([level for _l, level, _r in rings], dtype=np.uint8),
    }
