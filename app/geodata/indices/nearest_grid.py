"""A lat/lon grid that answers most nearest-place queries without a KD-tree call.

For each 0.25-degree cell we store every place that can be within REACH_KM of the nearest
place to some point of the cell: with c the cell centre, R an upper bound of the distance
from c to any point of the cell and d0 the distance from c to its nearest place, such a
place for a point q of the cell lies within d0 + 2R + REACH_KM of c
(dist(c, p) <= dist(c, q) + dist(q, p) <= R + (d0 + R) + REACH_KM).
Cells whose candidate list would be longer than WIDE_CANDIDATES keep none and fall back to
the KD-tree. A query then computes a cell number and compares a handful of unit vectors,
which is several times cheaper than a single scipy KD-tree call; narrow_to_country then
keeps, in a cell no border crosses, only the places of its country.
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
# cells with more candidates are looked at again with up to this many (then compared with
# numpy at query time: still several times cheaper than a KD-tree query for 64 places)
WIDE_CANDIDATES = 512
# reverse_geocode weighs places by size among those at most this much farther than the
# nearest one (see providers/embedded/nearest.py), so a cell lists those too
REACH_KM = 15.0
# A query where the grid has no list of the point's country's places takes the KD-tree's
# this many nearest places, those of its country if any (providers/embedded/nearest.py)
COUNTRY_FALLBACK = 64
# A place's reach, how far from its centre its size carries: 0.004 km x sqrt(population)
# (Paris, 2.1 M: 5.8 km; a town of 60,000: 1 km), at most REACH_KM.
REACH_PER_SQRT_PEOPLE_KM = 0.004
# added to every place's reach when ranking, so that villages still count by distance
BASE_REACH_KM = 1.0


def reach_km(population: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    people = np.maximum(np.asarray(population, dtype=np.float64), 0.0)
    return np.minimum(REACH_PER_SQRT_PEOPLE_KM * np.sqrt(people), REACH_KM)


def inhabited_countries(place_country: npt.NDArray[Any], countries: int) -> npt.NDArray[np.bool_]:
    """Per country: has it a place to name? (Antarctica has none.)"""
    known = np.asarray(place_country)[np.asarray(place_country) >= 0]
    return np.bincount(known, minlength=countries) > 0


def cell_radius_km(lat: npt.NDArray[np.float64], step_deg: float) -> npt.NDArray[np.float64]:
    """Centre to corner of a cell step_deg wide centred at `lat`, measured generously (the
    equatorward edge is the wider one)."""
    half = np.radians(step_deg / 2) * EARTH_RADIUS_KM
    widest = np.cos(np.radians(np.maximum(np.abs(lat) - step_deg / 2, 0.0)))
    return np.asarray(np.hypot(half, half * widest) * 1.02 + 1e-3)


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
    centres = unit_vectors(lat_grid.ravel(), lon_grid.ravel())
    chords, neighbours = tree.query(centres, k=MAX_CANDIDATES + 1, workers=-1)
    km = chord_to_km(chords)
    radius = cell_radius_km(lat_grid.ravel(), STEP_DEG)
    bound = km[:, 0] + 2 * radius + REACH_KM
    inside = km <= bound[:, None]
    complete = ~inside[:, -1]  # the (K+1)-th neighbour is already too far: list is whole
    counts = np.where(complete, inside.sum(axis=1), 0)
    pair_cells = [np.repeat(np.arange(len(counts)), counts)]
    pairs = [neighbours[inside & complete[:, None]]]
    del chords, neighbours, km, inside
    # the rest (coasts seen from the sea, dense regions) get a second, wider look, in
    # chunks to bound the memory; what is still too long is left to the KD-tree
    wide = np.flatnonzero(~complete)
    for chunk in np.array_split(wide, max(1, len(wide) // 4096)):
        chords, neighbours = tree.query(centres[chunk], k=WIDE_CANDIDATES + 1, workers=-1)
        inside = chord_to_km(chords) <= bound[chunk, None]
        whole = ~inside[:, -1]
        counts[chunk] = np.where(whole, inside.sum(axis=1), 0)
        pair_cells.append(np.repeat(chunk, counts[chunk]))
        pairs.append(neighbours[inside & whole[:, None]])
    order = np.argsort(np.concatenate(pair_cells), kind="stable")
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return {
        "grid_off": offsets,
        "grid_cand": np.concatenate(pairs)[order].astype(np.int32),
    }
