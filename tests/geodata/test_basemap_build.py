"""The basemap's coast levels built from small made-up data: two countries side by side,
a GSHHG coast that cuts a bay into them, a large island cut into pieces."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import shapely

from app.geodata.indices import basemap_build
from app.geodata.indices.basemap_build import PIECE_POINTS, basemap_arrays
from app.geodata.indices.store import (
    COAST_FIRST_LEVEL,
    LAYER_BORDER,
    LAYER_COUNTRY,
    LAYER_LAND,
    LEVEL_MAX_ZOOM,
)
from app.geodata.rendering.mercator import lonlat_to_world


def ring(*points: tuple[float, float]) -> npt.NDArray[np.float64]:
    return np.asarray([*points, points[0]], dtype=np.float64)


# Two countries sharing the meridian 10E from 0N to 1N (their only common edge)
WEST = ring((9.0, 0.0), (10.0, 0.0), (10.0, 1.0), (9.0, 1.0))
EAST = ring((10.0, 0.0), (11.0, 0.0), (11.0, 1.0), (10.0, 1.0))
# GSHHG's land: the two countries less a bay across the border south of 0.4N
LAND = ring((9.0, 0.0), (9.8, 0.0), (9.8, 0.4), (10.2, 0.4), (10.2, 0.0), (11.0, 0.0),
            (11.0, 1.0), (9.0, 1.0))  # fmt: skip


def lines(arrays: dict[str, npt.NDArray[np.generic]], layer: int, level: int) -> list[npt.NDArray]:
    offsets = arrays["bm_ring_off"]
    chosen = np.nonzero((arrays["bm_ring_layer"] == layer) & (arrays["bm_ring_level"] == level))[0]
    xy = np.asarray(arrays["bm_xy"], dtype=np.float64)
    return [xy[offsets[i] : offsets[i + 1]] for i in chosen.tolist()]


def test_a_border_is_the_shared_edge_clipped_to_the_coasts_land() -> None:
    coast = {level: lambda: {1: [LAND]} for level in range(COAST_FIRST_LEVEL, len(LEVEL_MAX_ZOOM))}
    arrays = basemap_arrays([WEST, EAST], {}, None, coast)
    top = len(LEVEL_MAX_ZOOM) - 1
    assert lines(arrays, LAYER_COUNTRY, top) == []  # land is GSHHG's there
    assert len(lines(arrays, LAYER_COUNTRY, COAST_FIRST_LEVEL - 1)) == 2
    border = lines(arrays, LAYER_BORDER, top)
    assert len(border) == 1
    x, y_south = lonlat_to_world(10.0, 0.4)
    _x, y_north = lonlat_to_world(10.0, 1.0)
    # on 10E, from the bay's shore (0.4N) to 1N: not across the bay, not along the coast
    assert np.allclose(border[0][:, 0], x, atol=1e-7)
    assert np.isclose(border[0][:, 1].max(), y_south, atol=1e-7)
    assert np.isclose(border[0][:, 1].min(), y_north, atol=1e-7)


def test_a_long_coast_is_cut_into_pieces_that_cover_it() -> None:
    angles = np.linspace(0, 2 * np.pi, 5 * PIECE_POINTS, endpoint=False)
    radius = 1 + 0.01 * (np.arange(len(angles)) % 2)  # a jagged shore: simplified, it stays
    island = np.stack([20 + radius * np.cos(angles), 40 + 0.7 * radius * np.sin(angles)], axis=1)
    island = np.concatenate([island, island[:1]])
    top = len(LEVEL_MAX_ZOOM) - 1
    arrays = basemap_arrays([], {}, None, {top: lambda: {1: [island]}})
    pieces = lines(arrays, LAYER_LAND, top)
    assert len(pieces) > 4
    assert max(len(p) for p in pieces) <= PIECE_POINTS
    whole = shapely.Polygon(np.stack(lonlat_to_world(island[:, 0], island[:, 1]), axis=1))
    union = shapely.union_all([shapely.Polygon(p) for p in pieces])
    assert abs(union.area - whole.area) / whole.area < 1e-3
    assert basemap_build.COAST_RESOLUTION[top] == "f"
