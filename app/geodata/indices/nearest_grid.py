"""A lat/lon grid that answers most nearest-place queries without a KD-tree call.

For each 0.25-degree cell we store every place that can be within REACH_KM of the nearest
place to some point of the cell: with c the cell centre, R an upper bound of the distance
from c to any point of the cell and d0 the distance from c to its nearest place, such a
place for a point q of the cell lies within d0 + 2R + REACH_KM of c
(dist(c, p) <= dist(c, q) + dist(q, p) <= R + (d0 + R) + REACH_KM).
Cells whose candidate list would be longer than MAX_CANDIDATES keep none and fall back to
the KD-tree. A query then computes a cell number and compares a handful of unit vectors,
which is several times cheaper than a single scipy KD-tree call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from app.geodata.geometry import EARTH_RADIUS_KM, chord_to_km, unit_vectors

STEP_DEG = 0.25
CELLS_PER_DEG = 4
ROWS, COLS = 180 * CELLS_PER_DEG, 360 * CELLS_PER_DEG
MAX_CANDIDATES = 48
# reverse_geocode weighs places by size among those at most this much farther than the
# nearest one (see providers/embedded/nearest.py), so a cell lists those too
REACH_KM = 15.0
# A place's reach, how far from its centre its size carries: 0.004 km x sqrt(population)
# (Paris, 2.1 M: 5.8 km; a town of 60,000: 1 km), at most REACH_KM.
REACH_PER_SQRT_PEOPLE_KM = 0.004


def reach_km(population: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    people = np.maximum(np.asarray(population, dtype=np.float64), 0.0)
    return np.minimum(REACH_PER_SQRT_PEOPLE_KM * np.sqrt(people), REACH_KM)


def cell_of(lat: float, lon: float) -> int:
    row = min(int((lat + 90.0) * CELLS_PER_DEG), ROWS - 1)
    col = int((lon + 180.0) * CELLS_PER_DEG) % COLS
    return row * COLS + col


def build_grid(xyz: npt.NDArray[np.float64]) -> dict[str, npt.NDArray[Any]]:
    """Candidate lists (positions into `xyz`) per cell, as CSR arrays grid_off/grid_cand."""
    tree = cKDTree(xyz)
    lat_c = -90.0 + (np.arange(ROWS) + 0.5) * STEP_DEG
    lon_c = -180.0 + (np.arange(COLS) + 0.5) * STEP_DEG
    lat_grid, lon_grid = np.meshgrid(lat_c, lon_c, indexing="ij")
    chords, neighbours = tree.query(
        unit_vectors(lat_grid.ravel(), lon_grid.ravel()), k=MAX_CANDIDATES + 1, workers=-1
    )
    km = chord_to_km(chords)
    # R: centre to corner, measured generously (the equatorward edge is the wider one)
    half = np.radians(STEP_DEG / 2) * EARTH_RADIUS_KM
    widest = np.cos(np.radians(np.maximum(np.abs(lat_grid.ravel()) - STEP_DEG / 2, 0.0)))
    radius = np.hypot(half, half * widest) * 1.02 + 1e-3
    bound = km[:, 0] + 2 * radius + REACH_KM
    inside = km <= bound[:, None]
    complete = ~inside[:, -1]  # the (K+1)-th neighbour is already too far: list is whole
    counts = np.where(complete, inside.sum(axis=1), 0)
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    keep = inside & complete[:, None]
    return {
        "grid_off": offsets.astype(np.int64),
        "grid_cand": neighbours[keep].astype(np.int32),
    }
