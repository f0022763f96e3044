"""Which country contains a point, exactly, in a few comparisons (Natural Earth 1:10m).

On the 0.25-degree grid of nearest_grid.py we store, per cell, the country containing the
cell's centre and the border edges (of every country ring) that pass through the cell. A
point's country is then found by walking from the centre to the point: crossing a
country's edges an odd number of times toggles whether the point is inside that country
(even-odd rule, so holes and enclaves need no special case). Most cells have no edge at
all (inland, open sea) and answer with one array read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.indices.nearest_grid import CELLS_PER_DEG, COLS, ROWS, STEP_DEG
from app.geodata.indices.wkb import Ring

SAMPLE_DEG = 0.05  # long edges are sampled this finely to find the cells they cross
NO_COUNTRY = -1
MANY_EDGES = 24  # cells with more edges than this are walked with numpy


def _cells(lon: npt.NDArray[np.float64], lat: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    row = np.clip(((lat + 90.0) * CELLS_PER_DEG).astype(np.int64), 0, ROWS - 1)
    col = ((lon + 180.0) * CELLS_PER_DEG).astype(np.int64) % COLS
    return row * COLS + col


def _edge_cells(ring: Ring) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(cell, edge number) for every cell each edge of the ring passes through."""
    return segment_cells(ring[:-1], ring[1:])


def segment_cells(
    a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(cell, segment number) for every cell each segment a[i]-b[i] passes through."""
    cell_a, cell_b = _cells(a[:, 0], a[:, 1]), _cells(b[:, 0], b[:, 1])
    edges = np.arange(len(a))
    same = cell_a == cell_b  # a segment between two points of a cell stays in it
    long = edges[~same]
    if not len(long):
        return cell_a[same], edges[same]
    # every long edge sampled at t = k / steps, k = 0..steps (np.linspace's points), all
    # edges in one array
    steps = np.ceil(np.abs(b[long] - a[long]).max(axis=1) / SAMPLE_DEG).astype(np.int64) + 1
    per_edge = steps + 1
    edge_of = np.repeat(np.arange(len(long)), per_edge)
    k = np.arange(int(per_edge.sum())) - np.repeat(np.cumsum(per_edge) - per_edge, per_edge)
    t = k * (1.0 / steps)[edge_of]
    t[np.cumsum(per_edge) - 1] = 1.0
    start, delta = a[long][edge_of], (b[long] - a[long])[edge_of]
    points = start + t[:, None] * delta
    # the 3x3 neighbourhood catches a corner clipped between two samples; an edge listed
    # in a cell it misses never crosses a walk inside that cell
    row = np.clip(((points[:, 1] + 90.0) * CELLS_PER_DEG).astype(np.int64), 0, ROWS - 1)
    col = ((points[:, 0] + 180.0) * CELLS_PER_DEG).astype(np.int64)
    near = np.concatenate(
        [
            np.clip(row + dr, 0, ROWS - 1) * COLS + (col + dc) % COLS
            for dr in (-1, 0, 1)
            for dc in (-1, 0, 1)
        ]
    )
    # distinct (edge, cell) pairs, ordered by edge then cell
    pairs = np.unique(np.tile(long[edge_of], 9) * (ROWS * COLS) + near)
    numbers, cells = np.divmod(pairs, ROWS * COLS)
    return np.concatenate([cell_a[same], cells]), np.concatenate([edges[same], numbers])


def _centre_countries(rings: Sequence[tuple[int, Ring]]) -> npt.NDArray[np.int16]:
    import shapely

    lat_c = -90.0 + (np.arange(ROWS) + 0.5) * STEP_DEG
    lon_c = -180.0 + (np.arange(COLS) + 0.5) * STEP_DEG
    parity: dict[int, npt.NDArray[np.bool_]] = {}
    for country, ring in rings:
        west, south = ring.min(axis=0)
        east, north = ring.max(axis=0)
        r0, r1 = np.searchsorted(lat_c, south), np.searchsorted(lat_c, north, side="right")
        c0, c1 = np.searchsorted(lon_c, west), np.searchsorted(lon_c, east, side="right")
        if r0 >= r1 or c0 >= c1 or len(ring) < 4:
            continue
        lon_g, lat_g = np.meshgrid(lon_c[c0:c1], lat_c[r0:r1])
        polygon = shapely.polygons(ring)
        shapely.prepare(polygon)
        inside = shapely.contains_xy(polygon, lon_g, lat_g)
        grid = parity.setdefault(country, np.zeros((ROWS, COLS), dtype=bool))
        grid[r0:r1, c0:c1] ^= inside
    centre = np.full((ROWS, COLS), NO_COUNTRY, dtype=np.int16)
    for country, grid in parity.items():
        centre[grid] = country
    return centre.ravel()


def build_country_grid(
    coded_rings: Sequence[tuple[str, Ring]], country_index: Mapping[str, int]
) -> dict[str, npt.NDArray[Any]]:
    """cc_cell (country of each cell's centre), and per cell (CSR cc_off) the edges
    cc_edge (lon1, lat1, lon2, lat2) with the country cc_edge_country they bound."""
    rings = [(country_index[c], r) for c, r in coded_rings if c in country_index]
    all_cells, all_edges, all_countries = [], [], []
    for country, ring in rings:
        cells, numbers = _edge_cells(ring)
        all_cells.append(cells)
        all_edges.append(np.hstack([ring[numbers], ring[numbers + 1]]))
        all_countries.append(np.full(len(cells), country, dtype=np.int16))
    cells = np.concatenate(all_cells)
    order = np.argsort(cells, kind="stable")
    counts = np.bincount(cells, minlength=ROWS * COLS)
    offsets = np.zeros(ROWS * COLS + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    centre = _centre_countries(rings)
    edge_country = np.concatenate(all_countries)[order]
    return {
        "cc_cell": centre,
        "cc_off": offsets.astype(np.int32),
        "cc_edge": np.concatenate(all_edges)[order].astype(np.float32),
        "cc_edge_country": edge_country,
        "cc_border": _border_cells(centre, offsets, edge_country),
    }


def _border_cells(
    centre: npt.NDArray[np.int16], offsets: npt.NDArray[np.int64], edge_country: Any
) -> npt.NDArray[np.uint8]:
    """1 for the cells where two countries meet (the edges of two countries pass through
    it, or the centre's country and another one's edges); coasts of one country are 0."""
    cells = len(centre)
    edge_cell = np.repeat(np.arange(cells, dtype=np.int64), np.diff(offsets))
    has_edges = np.diff(offsets) > 0
    with_centre = np.flatnonzero(has_edges & (centre >= 0))
    keys = np.concatenate(
        [
            edge_cell * 1024 + edge_country.astype(np.int64) + 1,
            with_centre * 1024 + centre[with_centre].astype(np.int64) + 1,
        ]
    )
    distinct = np.bincount(np.unique(keys) // 1024, minlength=cells)
    return (distinct >= 2).astype(np.uint8)


def country_at(
    lat: float, lon: float, cell: int, centre: Any, offsets: Any, edges: Any, countries: Any
) -> int:
    """The country index containing (lat, lon), or NO_COUNTRY (sea, unclaimed land).
    The arrays are memoryviews of the build's arrays (edges flattened)."""
    inside_centre = centre[cell]
    start, end = offsets[cell], offsets[cell + 1]
    if start == end:
        return int(inside_centre)
    if end - start > MANY_EDGES:
        crossed = _crossed_many(lat, lon, cell, start, end, edges, countries)
    else:
        crossed = _crossed(lat, lon, cell, start, end, edges, countries)
    for country, odd in crossed.items():
        if odd and country != inside_centre:
            return int(country)  # walked into it
    if crossed.get(inside_centre, 0):
        return NO_COUNTRY  # walked out of the centre's country into no other
    return int(inside_centre)


def _crossed(
    lat: float, lon: float, cell: int, start: int, end: int, edges: Any, countries: Any
) -> dict[int, int]:
    """Per country: 1 if the walk from the cell centre to the point crosses its edges an
    odd number of times."""
    row, col = divmod(cell, COLS)
    cy, cx = -90.0 + (row + 0.5) * STEP_DEG, -180.0 + (col + 0.5) * STEP_DEG
    dx, dy = lon - cx, lat - cy
    crossed: dict[int, int] = {}
    for edge in range(start, end):
        at = 4 * edge
        x1, y1, x2, y2 = edges[at], edges[at + 1], edges[at + 2], edges[at + 3]
        # does the walk centre -> point cross the edge? (signs of four orientations)
        d1 = dx * (y1 - cy) - dy * (x1 - cx)
        d2 = dx * (y2 - cy) - dy * (x2 - cx)
        if (d1 > 0) == (d2 > 0):
            continue
        ex, ey = x2 - x1, y2 - y1
        d3 = ex * (cy - y1) - ey * (cx - x1)
        d4 = ex * (lat - y1) - ey * (lon - x1)
        if (d3 > 0) != (d4 > 0):
            country = countries[edge]
            crossed[country] = crossed.get(country, 0) ^ 1
    return crossed


def walk_crosses(lat: float, lon: float, cell: int, x1: Any, y1: Any, x2: Any, y2: Any) -> Any:
    """Which edges (arrays of their ends) the walk from the cell's centre to the point
    crosses: a boolean array."""
    row, col = divmod(cell, COLS)
    cy, cx = -90.0 + (row + 0.5) * STEP_DEG, -180.0 + (col + 0.5) * STEP_DEG
    dx, dy = lon - cx, lat - cy
    d1 = dx * (y1 - cy) - dy * (x1 - cx)
    d2 = dx * (y2 - cy) - dy * (x2 - cx)
    ex, ey = x2 - x1, y2 - y1
    d3 = ex * (cy - y1) - ey * (cx - x1)
    d4 = ex * (lat - y1) - ey * (lon - x1)
    return ((d1 > 0) != (d2 > 0)) & ((d3 > 0) != (d4 > 0))


def _crossed_many(
    lat: float, lon: float, cell: int, start: int, end: int, edges: Any, countries: Any
) -> dict[int, int]:
    """_crossed with numpy, for cells with many edges (the same arithmetic, in float64)."""
    seg = np.frombuffer(edges, dtype=np.float32)[4 * start : 4 * end].astype(np.float64)
    hit = walk_crosses(lat, lon, cell, seg[0::4], seg[1::4], seg[2::4], seg[3::4])
    crossed: dict[int, int] = {}
    for country in np.frombuffer(countries, dtype=np.int16)[start:end][hit].tolist():
        crossed[country] = crossed.get(country, 0) ^ 1
    return crossed
