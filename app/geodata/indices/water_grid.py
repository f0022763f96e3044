"""Whether a point is on land, on a lake or on the sea (GSHHG's high-resolution shoreline,
0.2 km, with its lakes and lakes' islands, and Natural Earth's lakes where GSHHG has none:
the water the basemap draws).

The layout is country_grid.py's: per cell of the 0.25-degree grid, which classes of ring
hold the cell's centre (a bit each), and the edges that pass through the cell with the
class of their ring. A point's classes are the centre's, each flipped by every crossing of
that class's edges on the walk from the centre to the point (even-odd rule). Land is inside
a land ring and not on a lake, unless on a lake's island; a lake is inside a lake ring and
not on its island; the sea is neither. The distance to the nearest edge of the cells around
the point says how near the shore is (a shoreline 0.2 km off is no proof of water).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import cos, radians
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.geometry import EARTH_RADIUS_KM
from app.geodata.indices.country_grid import segment_cells, walk_crosses
from app.geodata.indices.nearest_grid import CELLS_PER_DEG, COLS, ROWS, STEP_DEG
from app.geodata.indices.wkb import Ring

# ring classes (bits of wg_cell)
WATER_LAND, WATER_LAKE, WATER_ISLAND = 0, 1, 2
LAND, LAKE, SEA = "land", "lake", "sea"
KM_PER_DEG = radians(1.0) * EARTH_RADIUS_KM


def build_water_grid(rings: Mapping[int, Sequence[Ring]]) -> dict[str, npt.NDArray[Any]]:
    """wg_cell (per cell, bit c set when the centre is inside an odd number of class c
    rings), and per cell (CSR wg_off) the edges wg_edge (lon1, lat1, lon2, lat2) with the
    class wg_edge_class of their ring. `rings` maps each class to its rings."""
    all_cells, all_edges, all_classes = [], [], []
    centre = np.zeros((ROWS, COLS), dtype=np.uint8)
    for water_class, class_rings in rings.items():
        usable = [np.asarray(r, dtype=np.float64) for r in class_rings if len(r) >= 4]
        if not usable:
            continue
        starts, ends = _unshared(
            np.concatenate([r[:-1] for r in usable]), np.concatenate([r[1:] for r in usable])
        )
        cells, numbers = segment_cells(starts, ends)
        all_cells.append(cells)
        all_edges.append(np.hstack([starts[numbers], ends[numbers]]).astype(np.float32))
        all_classes.append(np.full(len(cells), water_class, dtype=np.uint8))
        centre ^= _centre_parity(usable).astype(np.uint8) << water_class
    cells = np.concatenate(all_cells)
    order = np.argsort(cells, kind="stable")
    offsets = np.zeros(ROWS * COLS + 1, dtype=np.int64)
    np.cumsum(np.bincount(cells, minlength=ROWS * COLS), out=offsets[1:])
    return {
        "wg_cell": centre.ravel(),
        "wg_off": offsets.astype(np.int32),
        "wg_edge": np.concatenate(all_edges)[order],
        "wg_edge_class": np.concatenate(all_classes)[order],
    }


def _unshared(
    starts: npt.NDArray[np.float64], ends: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The edges less those two rings share (GSHHG cuts a polygon across 180 degrees in
    two, Antarctica also along the prime meridian): crossing such an edge flips a class
    twice, and a point on it would flip it once."""
    a, b = np.rint(starts * 1e6).astype(np.int64), np.rint(ends * 1e6).astype(np.int64)
    swap = (a[:, 0] > b[:, 0]) | ((a[:, 0] == b[:, 0]) & (a[:, 1] > b[:, 1]))
    keys = np.concatenate([np.where(swap[:, None], b, a), np.where(swap[:, None], a, b)], axis=1)
    _unique, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    single = counts[inverse.ravel()] == 1
    return starts[single], ends[single]


def _centre_parity(rings: Sequence[Ring]) -> npt.NDArray[np.bool_]:
    """Per cell: whether its centre is inside an odd number of the rings."""
    import shapely

    lat_c = -90.0 + (np.arange(ROWS) + 0.5) * STEP_DEG
    lon_c = -180.0 + (np.arange(COLS) + 0.5) * STEP_DEG
    grid = np.zeros((ROWS, COLS), dtype=bool)
    for ring in rings:
        west, south = ring.min(axis=0)
        east, north = ring.max(axis=0)
        r0, r1 = np.searchsorted(lat_c, south), np.searchsorted(lat_c, north, side="right")
        c0, c1 = np.searchsorted(lon_c, west), np.searchsorted(lon_c, east, side="right")
        if r0 >= r1 or c0 >= c1:
            continue
        lon_g, lat_g = np.meshgrid(lon_c[c0:c1], lat_c[r0:r1])
        polygon = shapely.polygons(ring)
        shapely.prepare(polygon)
        grid[r0:r1, c0:c1] ^= shapely.contains_xy(polygon, lon_g, lat_g)
    return grid


def cell_of(lat: float, lon: float) -> int:
    row = min(max(int((lat + 90.0) * CELLS_PER_DEG), 0), ROWS - 1)
    return row * COLS + int((lon + 180.0) * CELLS_PER_DEG) % COLS


def water_at(
    lat: float, lon: float, centre: Any, offsets: Any, edges: npt.NDArray[np.float32], classes: Any
) -> str:
    """LAND, LAKE or SEA at (lat, lon). edges: wg_edge as an (n, 4) array."""
    lat = min(max(lat, -89.9999), 89.9999)  # a pole lies on the rings' edge along it
    cell = cell_of(lat, lon)
    bits = int(centre[cell])
    start, end = int(offsets[cell]), int(offsets[cell + 1])
    if end > start:
        seg = edges[start:end].astype(np.float64)
        hit = walk_crosses(lat, lon, cell, seg[:, 0], seg[:, 1], seg[:, 2], seg[:, 3])
        for water_class in np.asarray(classes[start:end])[hit].tolist():
            bits ^= 1 << water_class
    land, lake, island = (bool(bits >> c & 1) for c in (WATER_LAND, WATER_LAKE, WATER_ISLAND))
    if lake and not island:
        return LAKE
    return LAND if land or island else SEA


def shore_km(
    lat: float, lon: float, offsets: Any, edges: npt.NDArray[np.float32], reach_km: float
) -> float:
    """km from (lat, lon) to the nearest shoreline edge of its cell and the 8 around it;
    inf when none is within reach_km (at most a cell's height)."""
    lat = min(max(lat, -89.9999), 89.9999)
    row = min(max(int((lat + 90.0) * CELLS_PER_DEG), 0), ROWS - 1)
    col = int((lon + 180.0) * CELLS_PER_DEG) % COLS
    spans = [
        (int(offsets[r * COLS + c % COLS]), int(offsets[r * COLS + c % COLS + 1]))
        for r in range(max(row - 1, 0), min(row + 1, ROWS - 1) + 1)
        for c in range(col - 1, col + 2)
    ]
    spans = [(s, e) for s, e in spans if e > s]
    if not spans:
        return float("inf")
    seg = np.concatenate([edges[s:e] for s, e in spans]).astype(np.float64)
    scale = cos(radians(lat)) * KM_PER_DEG
    x1 = ((seg[:, 0] - lon + 180.0) % 360.0 - 180.0) * scale
    x2 = ((seg[:, 2] - lon + 180.0) % 360.0 - 180.0) * scale
    y1, y2 = (seg[:, 1] - lat) * KM_PER_DEG, (seg[:, 3] - lat) * KM_PER_DEG
    dx, dy = x2 - x1, y2 - y1
    length_sq = dx * dx + dy * dy
    t = np.clip(-(x1 * dx + y1 * dy) / np.where(length_sq > 0.0, length_sq, 1.0), 0.0, 1.0)
    km = float(np.hypot(x1 + t * dx, y1 + t * dy).min())
    return km if km <= reach_km else float("inf")


def water_rings() -> dict[int, list[Ring]]:
    """The rings of each class from the packages: GSHHG's high-resolution land (and
    Antarctica), lakes and lakes' islands; Natural Earth's lakes that meet no GSHHG lake
    (reservoirs, mostly) with their islands, as the basemap draws them."""
    import shapely

    from app.geodata.indices import water_sources as ws

    gshhg = ws.gshhg_shorelines("h")
    lakes = list(gshhg.get(ws.GSHHG_LAKE, []))
    ne_lakes, ne_islands = ws.natural_earth_lakes()
    tree = shapely.STRtree(shapely.make_valid(np.array([shapely.Polygon(r) for r in lakes])))
    ne_polygons = shapely.make_valid(np.array([shapely.Polygon(r) for r in ne_lakes]))
    met = set(tree.query(ne_polygons, predicate="intersects")[0].tolist())
    kept = [ring for i, ring in enumerate(ne_lakes) if i not in met]
    kept_tree = shapely.STRtree(shapely.make_valid(np.array([shapely.Polygon(r) for r in kept])))
    firsts = shapely.points(np.array([ring[0] for ring in ne_islands]))
    inside = set(kept_tree.query(firsts, predicate="within")[0].tolist())
    return {
        WATER_LAND: [*gshhg.get(ws.GSHHG_LAND, []), *gshhg.get(ws.GSHHG_ANTARCTICA, [])],
        WATER_LAKE: lakes + kept,
        WATER_ISLAND: [
            *gshhg.get(ws.GSHHG_ISLAND, []),
            *(ring for i, ring in enumerate(ne_islands) if i in inside),
        ],
    }
