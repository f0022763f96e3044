"""Per country, the places a point of a GENERAL cell can be given (reverse_build.py: a
cell where two countries can hold the point, so a query finds the point's country first).

The cell's listed places of each country it holds are stored together, keyed by cell and
country, so a query takes a slice instead of filtering the list. Where the cell lists no
place of a country it holds (a remote border: that country's nearest places lie beyond
the cell's list), a query used to ask the KD-tree for the COUNTRY_FALLBACK nearest places
and keep those of the point's country, or all of them if none was. Here that is decided
for the whole cell where it can be:
- the country has a place nearer than the COUNTRY_FALLBACK-th nearest place from every
  point of the cell: its list is computed with nearest_grid.build_grid's bound over that
  country's places alone (exact, where the 64 nearest were not always);
- it has none from any point of the cell: its list is empty, and the query takes the
  nearest places of any country. Natural Earth's France holds French Guiana and Reunion,
  whose places GeoNames files under GF and RE, 6,600 km from France's nearest;
- in between (and where a list would pass WIDE_CANDIDATES) the query asks the KD-tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from app.geodata.geometry import EARTH_RADIUS_KM, km_to_chord, unit_vectors
from app.geodata.indices.nearest_grid import (
    COLS,
    COUNTRY_FALLBACK,
    REACH_KM,
    STEP_DEG,
    WIDE_CANDIDATES,
    cell_radius_km,
)

# a list's key: cell * KEY_STRIDE + country (fewer than KEY_STRIDE countries)
KEY_STRIDE = 1024


def country_lists(
    general: npt.NDArray[np.int64],
    narrowed: Mapping[str, npt.NDArray[Any]],
    cc: Mapping[str, npt.NDArray[Any]],
    place_country: npt.NDArray[np.int64],
    inhabited: npt.NDArray[np.bool_],
    xyz: npt.NDArray[np.float64],
) -> dict[str, npt.NDArray[Any]]:
    """cl_key (sorted), cl_off and cl_cand: per GENERAL cell and inhabited country a point
    of it can be in, the places a query there compares. `general`: the GENERAL cells;
    `narrowed`: grid_off and grid_cand; `cc`: the country grid's cc_cell, cc_off and
    cc_edge_country."""
    offsets, candidates = narrowed["grid_off"], narrowed["grid_cand"]
    wanted = _wanted_keys(general, cc, inhabited)
    cells, slots = _entries(offsets, general)
    cands = candidates[slots].astype(np.int64)
    keys = cells * KEY_STRIDE + place_country[cands]
    listed = np.isin(keys, wanted)
    keys, cands = keys[listed], cands[listed]
    more_keys, more_cands, far = _beyond_the_list(np.setdiff1d(wanted, keys), place_country, xyz)
    keys, cands = np.concatenate([keys, more_keys]), np.concatenate([cands, more_cands])
    order = np.argsort(keys, kind="stable")  # a cell's listed places keep their order
    keys, cands = keys[order], cands[order]
    cl_key = np.union1d(keys, far)  # a far country's key has an empty list
    return {
        "cl_key": cl_key.astype(np.int64),
        "cl_off": np.append(np.searchsorted(keys, cl_key), len(keys)).astype(np.int64),
        "cl_cand": cands.astype(np.int32),
    }


def _entries(
    offsets: npt.NDArray[np.int64], cells: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(cell, position) of every entry the CSR `offsets` gives `cells`, in order."""
    counts = np.diff(offsets)[cells]
    first = np.repeat(offsets[cells] - np.cumsum(counts) + counts, counts)
    return np.repeat(cells, counts), first + np.arange(int(counts.sum()))


def _wanted_keys(
    general: npt.NDArray[np.int64],
    cc: Mapping[str, npt.NDArray[Any]],
    inhabited: npt.NDArray[np.bool_],
) -> npt.NDArray[np.int64]:
    """The keys a query can ask for: each GENERAL cell with its centre's country and the
    countries whose edges pass through it (country_grid.country_at answers one of these),
    when inhabited (a query takes no country for the others)."""
    centre = np.asarray(cc["cc_cell"], dtype=np.int64)
    edge_cells, edge_slots = _entries(np.asarray(cc["cc_off"], dtype=np.int64), general)
    cells = np.concatenate([general, edge_cells])
    country = np.concatenate(
        [centre[general], np.asarray(cc["cc_edge_country"], dtype=np.int64)[edge_slots]]
    )
    lived = country >= 0
    lived[lived] = inhabited[country[lived]]
    return np.unique(cells[lived] * KEY_STRIDE + country[lived])


def _beyond_the_list(
    missing: npt.NDArray[np.int64], place_country: npt.NDArray[np.int64], xyz: Any
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(keys, places, far keys) for the cells that list no place of a country they hold
    (see the module's docstring). Chords, as the query compares them: d0 the nearest
    place of the country to the cell's centre, dk the COUNTRY_FALLBACK-th nearest of
    all, R the cell's radius (build_grid's, great-circle km, so at least the chord). A
    list: the country's places within d0 + 2R + REACH of the centre."""
    keys, places = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    far = [np.zeros(0, dtype=np.int64)]
    reach = km_to_chord(REACH_KM)
    cells = missing // KEY_STRIDE
    row, col = np.divmod(cells, COLS)
    lat = -90.0 + (row + 0.5) * STEP_DEG
    centres = unit_vectors(lat, -180.0 + (col + 0.5) * STEP_DEG)
    radius = cell_radius_km(lat, STEP_DEG) / EARTH_RADIUS_KM
    kth = cKDTree(xyz).query(centres, k=[COUNTRY_FALLBACK])[0][:, 0]
    for country in np.unique(missing % KEY_STRIDE).tolist():
        at = np.flatnonzero(missing % KEY_STRIDE == country)
        own = np.flatnonzero(place_country == country)
        tree = cKDTree(xyz[own])
        nearest = tree.query(centres[at])[0]
        far.append(missing[at[nearest > kth[at] + 2 * radius[at]]])
        near = nearest + 2 * radius[at] < kth[at]
        at, nearest = at[near], nearest[near]
        bound = nearest + 2 * radius[at] + reach
        for key, found in zip(
            missing[at].tolist(), tree.query_ball_point(centres[at], bound), strict=True
        ):
            if len(found) <= WIDE_CANDIDATES:
                keys.append(np.full(len(found), key, dtype=np.int64))
                places.append(own[np.sort(np.asarray(found, dtype=np.int64))])
    return np.concatenate(keys), np.concatenate(places), np.concatenate(far)
