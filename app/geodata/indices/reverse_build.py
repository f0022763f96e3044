"""The reverse_geocode extras built after the place and country grids: each cell's list
narrowed to what a query there can need (grid_filter says how), per country in the cells
where two meet (country_lists.py), and the timezone zones that may decide a country near a
border (border_zones.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.geometry import EARTH_RADIUS_KM, km_to_chord, unit_vectors
from app.geodata.indices.border_zones import trusted_zone_countries
from app.geodata.indices.country_lists import country_lists
from app.geodata.indices.nearest_grid import (
    BASE_REACH_KM,
    COLS,
    REACH_KM,
    STEP_DEG,
    cell_radius_km,
    inhabited_countries,
    reach_km,
)

# grid_filter per cell: the country every listed place is in and every point of the cell
# takes its places from (0 and up), or one of these
UNFILTERED = -1  # every point of the cell takes every listed place (open sea, the ice)
GENERAL = -2  # decide per query: find the point's country, then its places
# lists up to this long are compared in plain Python at query time; longer ones of cells
# needing no country test are split into SPLIT x SPLIT sub-cells (split_long_lists)
SHORT_LIST = 24
SPLIT = 4
REACH_CHORD_KM = km_to_chord(REACH_KM) * EARTH_RADIUS_KM  # the query's REACH_CHORD, in km


def reverse_extras(
    arrays: Mapping[str, npt.NDArray[Any]], country_index: Mapping[str, int]
) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
    """(arrays, tables) to add to the index; `arrays` holds the features, the place grid
    (build_grid) and the country grid (build_country_grid)."""
    place_country = np.asarray(arrays["f_country"])[arrays["reverse_features"]]
    inhabited = inhabited_countries(place_country, len(country_index))
    narrowed = narrow_lists(arrays, place_country.astype(np.int64), inhabited)
    xyz = unit_vectors(
        np.asarray(arrays["f_lat"])[arrays["reverse_features"]],
        np.asarray(arrays["f_lon"])[arrays["reverse_features"]],
    )
    population = np.asarray(arrays["f_population"])[arrays["reverse_features"]]
    place_reach_km = reach_km(population) + BASE_REACH_KM
    narrowed = prune_lists(narrowed, xyz, place_reach_km)
    narrowed.update(split_long_lists(narrowed, xyz, place_reach_km))
    general = np.flatnonzero(narrowed["grid_filter"] == GENERAL)
    narrowed.update(
        country_lists(general, narrowed, arrays, place_country.astype(np.int64), inhabited, xyz)
    )
    zones = trusted_zone_countries(arrays["cc_cell"], country_index)
    return narrowed, {"borderZones": zones}


def narrow_lists(
    arrays: Mapping[str, npt.NDArray[Any]],
    place_country: npt.NDArray[np.int64],
    inhabited: npt.NDArray[np.bool_],
) -> dict[str, npt.NDArray[Any]]:
    """A query keeps only the listed places of the point's country (all of them at sea or
    on uninhabited land). In a cell no border crosses that country is known now: drop the
    others from the list. In a cell a coast crosses, a point may be in the country or at
    sea; if all listed places are in that country, both keep them all. Such cells answer
    without a country test (grid_filter), the rest are GENERAL."""
    offsets, candidates = np.asarray(arrays["grid_off"]), np.asarray(arrays["grid_cand"])
    counts = np.diff(offsets)
    cells = len(counts)
    pair_cell = np.repeat(np.arange(cells), counts)
    pair_country = place_country[candidates]
    single = _single_country(arrays, inhabited)  # >= 0, UNFILTERED or GENERAL per cell
    no_border = np.diff(np.asarray(arrays["cc_off"])) == 0
    in_country = pair_country == single[pair_cell]
    found = np.bincount(pair_cell, weights=in_country, minlength=cells) > 0
    narrowed = no_border & (single >= 0) & found
    keep = ~narrowed[pair_cell] | in_country
    new_counts = np.bincount(pair_cell[keep], minlength=cells)
    new_offsets = np.zeros(cells + 1, dtype=np.int64)
    np.cumsum(new_counts, out=new_offsets[1:])
    # a list all in one country: the lowest and the highest country agree
    lowest = np.full(cells, np.iinfo(np.int64).max)
    highest = np.full(cells, np.iinfo(np.int64).min)
    np.minimum.at(lowest, pair_cell[keep], pair_country[keep])
    np.maximum.at(highest, pair_cell[keep], pair_country[keep])
    all_in = (new_counts > 0) & (lowest == highest) & (lowest == single)
    grid_filter = np.full(cells, GENERAL, dtype=np.int16)
    grid_filter[(single >= 0) & all_in] = single[(single >= 0) & all_in]
    grid_filter[(single == UNFILTERED) & (new_counts > 0)] = UNFILTERED
    return {
        "grid_off": new_offsets,
        "grid_cand": candidates[keep].astype(np.int32),
        "grid_filter": grid_filter,
    }


def _single_country(
    arrays: Mapping[str, npt.NDArray[Any]], inhabited: npt.NDArray[np.bool_]
) -> npt.NDArray[np.int64]:
    """Per cell: the one inhabited country a point of it can be in (its centre's, or the
    one whose edges pass through), UNFILTERED if none can, GENERAL if two or more can."""
    centre = np.asarray(arrays["cc_cell"], dtype=np.int64)
    cc_off = np.asarray(arrays["cc_off"], dtype=np.int64)
    cells = len(centre)
    edge_cell = np.repeat(np.arange(cells), np.diff(cc_off))
    edge_country = np.asarray(arrays["cc_edge_country"], dtype=np.int64)
    cell_of = np.concatenate([np.arange(cells), edge_cell])
    country = np.concatenate([centre, edge_country])
    lived = country >= 0
    lived[lived] = inhabited[country[lived]]
    lowest = np.full(cells, np.iinfo(np.int64).max)
    highest = np.full(cells, np.iinfo(np.int64).min)
    np.minimum.at(lowest, cell_of[lived], country[lived])
    np.maximum.at(highest, cell_of[lived], country[lived])
    single = np.where(lowest == highest, lowest, GENERAL)
    single[highest == np.iinfo(np.int64).min] = UNFILTERED
    return single


def prune_lists(
    narrowed: Mapping[str, npt.NDArray[Any]],
    xyz: npt.NDArray[np.float64],
    place_reach_km: npt.NDArray[np.float64],
) -> dict[str, npt.NDArray[Any]]:
    """Drop from the lists of cells that need no country test the places that can win at
    no point of the cell: those kept by none of its sub-cells (_sub_cell_lists). Exact:
    the nearest place and the winner at a point are kept by the point's sub-cell."""
    offsets, candidates = narrowed["grid_off"], narrowed["grid_cand"]
    counts = np.diff(offsets)
    cells = np.flatnonzero((narrowed["grid_filter"] != GENERAL) & (counts > 1))
    keep = np.ones(len(candidates), dtype=bool)
    keep[np.repeat(offsets[cells], counts[cells]) + _ranks(counts[cells])] = False
    for slots, _cands, _at, _sub, kept in _sub_cell_lists(narrowed, cells, xyz, place_reach_km):
        keep[slots[kept]] = True
    cell_of_slot = np.repeat(np.arange(len(counts)), counts)
    new_offsets = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(np.bincount(cell_of_slot[keep], minlength=len(counts)), out=new_offsets[1:])
    return {**narrowed, "grid_off": new_offsets, "grid_cand": candidates[keep]}


def split_long_lists(
    narrowed: Mapping[str, npt.NDArray[Any]],
    xyz: npt.NDArray[np.float64],
    place_reach_km: npt.NDArray[np.float64],
) -> dict[str, npt.NDArray[Any]]:
    """Cells whose list is still long (coasts seen from the sea, dense regions) are split
    into SPLIT x SPLIT sub-cells with lists of their own (_sub_cell_lists), so a query
    there compares about ten places rather than hundreds. grid_sub: a cell's first
    sub-cell row, or -1."""
    counts = np.diff(narrowed["grid_off"])
    long_cells = np.flatnonzero((narrowed["grid_filter"] != GENERAL) & (counts > SHORT_LIST))
    grid_sub = np.full(len(counts), -1, dtype=np.int32)
    grid_sub[long_cells] = np.arange(len(long_cells), dtype=np.int32) * SPLIT * SPLIT
    sub_rows, sub_cands = [], []
    for _slots, cands, at, sub, kept in _sub_cell_lists(narrowed, long_cells, xyz, place_reach_km):
        sub_rows.append(grid_sub[long_cells][at[kept]] + sub)
        sub_cands.append(cands[kept])
    rows = np.concatenate(sub_rows) if sub_rows else np.zeros(0, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    sub_off = np.zeros(len(long_cells) * SPLIT * SPLIT + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=len(sub_off) - 1), out=sub_off[1:])
    return {
        "grid_sub": grid_sub,
        "sub_off": sub_off,
        "sub_cand": (np.concatenate(sub_cands) if sub_cands else rows)[order].astype(np.int32),
    }


def _ranks(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """0, 1, ..., n-1 for each count n, concatenated."""
    first = np.cumsum(counts) - counts
    return np.arange(int(counts.sum())) - np.repeat(first, counts)


def _sub_cell_lists(
    narrowed: Mapping[str, npt.NDArray[Any]],
    cells: npt.NDArray[np.int64],
    xyz: npt.NDArray[np.float64],
    place_reach_km: npt.NDArray[np.float64],
) -> Iterator[tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any], int, npt.NDArray[Any]]]:
    """For the SPLIT x SPLIT sub-cells of each of `cells` (which need no country test):
    which places of the cell's list a query in the sub-cell needs. The same bound as
    nearest_grid.build_grid with the sub-cell's smaller radius, less the places that
    cannot win anywhere in the sub-cell (their best score is above the worst score of a
    place eligible all over it), the nearest candidates always kept (eligibility is
    measured from the nearest). `place_reach_km`: per place, its reach plus BASE_REACH_KM.
    Yields, per chunk of cells and sub-cell: (list slots, places, position in `cells`,
    sub-cell number, kept), the first three per pair of cell and listed place."""
    offsets, candidates = narrowed["grid_off"], narrowed["grid_cand"]
    counts = np.diff(offsets)
    base = 0  # position of the chunk's first cell in `cells`
    for chunk in np.array_split(cells, max(1, len(cells) // 2048)):
        pair_at = np.repeat(np.arange(len(chunk)), counts[chunk])
        first = np.cumsum(counts[chunk]) - counts[chunk]  # each cell's first pair
        slots = offsets[chunk][pair_at] + _ranks(counts[chunk])
        cands = candidates[slots]
        place, reach = xyz[cands], place_reach_km[cands]
        row, col = np.divmod(chunk, COLS)
        for sub in range(SPLIT * SPLIT):
            sub_row, sub_col = divmod(sub, SPLIT)
            lat = -90.0 + (row + (sub_row + 0.5) / SPLIT) * STEP_DEG
            lon = -180.0 + (col + (sub_col + 0.5) / SPLIT) * STEP_DEG
            radius = cell_radius_km(lat, STEP_DEG / SPLIT)[pair_at]
            # chord lengths in km, the measure the query compares (Euclidean, so the
            # triangle inequality bounds them over the sub-cell)
            gap = place - unit_vectors(lat, lon)[pair_at]
            dist = np.sqrt(gap[:, 0] * gap[:, 0] + gap[:, 1] * gap[:, 1] + gap[:, 2] * gap[:, 2])
            dist *= EARTH_RADIUS_KM
            nearest = np.minimum.reduceat(dist, first)[pair_at]
            eligible = dist - radius <= nearest + radius + REACH_KM
            always = dist + radius <= nearest - radius + REACH_CHORD_KM
            cap = np.minimum.reduceat(np.where(always, (dist + radius) / reach, np.inf), first)
            may_win = (dist - radius) / reach <= cap[pair_at] * (1 + 1e-9)
            may_be_nearest = dist - radius <= nearest + radius
            yield slots, cands, base + pair_at, sub, eligible & (may_win | may_be_nearest)
        base += len(chunk)
