"""Basemap vectors for static_map, pre-projected to Web Mercator world units (x, y in
[0, 1], y down), each ring with its bounding box so a render only touches what is in view.

Up to zoom 8 (levels below COAST_FIRST_LEVEL) land is Natural Earth's 1:10m countries,
their outlines drawn as borders, with US state outlines. From zoom 9 on the 1:10m
coastline is too coarse (its median segment is 17 px long at zoom 10), so land is GSHHG's
shoreline (high resolution at zooms 9-10, full at 11-12) and the borders are lines: the
edges two Natural Earth countries (or two TIGER states) share, clipped to GSHHG's land, so
that no border runs across water the finer coast shows and none traces a coast. GSHHG
closes rivers at their mouths: the wide ones Natural Earth's ocean goes up (the Hudson) are
drawn over it as lakes (estuaries.py).

Rings are stored at several levels of detail, simplified (Douglas-Peucker, GEOS) to under
a pixel at the highest zoom of their level. Large rings (a continent's shoreline has a
million vertices) are cut into pieces of at most PIECE_POINTS vertices along a quadtree,
so that a city map projects the few thousand vertices near it, not the continent's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import shapely

from app.geodata.indices.store import (
    COAST_FIRST_LEVEL,
    LAYER_BORDER,
    LAYER_COUNTRY,
    LAYER_ISLAND,
    LAYER_LAKE,
    LAYER_LAND,
    LAYER_RIVER,
    LAYER_STATE,
    LAYER_STATE_LINE,
    LEVEL_MAX_ZOOM,
)
from app.geodata.indices.wkb import Ring
from app.geodata.rendering.mercator import TILE_SIZE, lonlat_to_world

TOLERANCE_PX = 0.6
# A river is drawn at a level of detail when at least this many pixels long at the given
# zoom (GSHHG's rivers carry no rank: length stands in for it), and never on a world map.
RIVER_MIN_PX = ((0.0, 2), (200.0, 5), (120.0, 8), (30.0, 18), (30.0, 18))
RIVER_FIRST_LEVEL = 1
# GSHHG's resolution at each level drawn from it: high (0.2 km) at zooms 9-10, full at 11-12
COAST_RESOLUTION = {3: "h", 4: "f"}
# GSHHG's shoreline is simplified in degrees, the units of its grid: the full resolution
# lies on a 3-arc-second grid (0.00083 degrees, 2.4 px wide at zoom 12 and taller towards
# the poles), its coast drawn in stair steps; simplified to 0.6 of a step, it reads as a
# coast again. High resolution (zooms 9-10) to 0.6 px at zoom 10 on the equator.
COAST_TOLERANCE_DEG = {3: 0.0008, 4: 0.0005}
PIECE_POINTS = 1024  # a ring or line longer than this is cut into pieces
POLYGON_CHUNK = 20_000  # GSHHG's rings simplified and projected at a time
# GSHHG's levels (water_sources): 1 land, 2 lake, 3 island in a lake, 5 Antarctica
GSHHG_LAND_LEVELS, GSHHG_LAKE_LEVEL, GSHHG_ISLAND_LEVEL = (1, 5), 2, 3

Xy = npt.NDArray[np.float64]  # (n, 2) world units


def basemap_arrays(
    countries: Sequence[Ring],
    states: Mapping[str, list[Ring]],
    water: Mapping[int, Sequence[Ring]] | None = None,
    coast: Mapping[int, Callable[[], Mapping[int, Sequence[Ring]]]] | None = None,
    estuaries: tuple[Sequence[Ring], Sequence[Ring]] = ((), ()),
) -> dict[str, npt.NDArray[Any]]:
    """The rings of every layer at every level of detail; `water` maps LAYER_LAKE,
    LAYER_ISLAND (rings) and LAYER_RIVER (lines) to theirs; `coast` maps each level from
    COAST_FIRST_LEVEL on to a reader of GSHHG's rings by GSHHG level, called when the level
    is built (without it, those levels draw Natural Earth's countries as the levels below
    do). `estuaries` (water rings, their islands' rings: the wide rivers GSHHG closes,
    indices/estuaries.py) are drawn as lakes at those levels. Rings are kept as float32 as
    they are made: full resolution is 9.5M vertices."""
    water = water or {}
    coast = coast or {}
    country_rings = [_project(ring) for ring in countries if len(ring) >= 4]
    state_rings = [_project(ring) for rings in states.values() for ring in rings if len(ring) >= 4]
    lakes = [_project(ring) for ring in water.get(LAYER_LAKE, ()) if len(ring) >= 4]
    islands = [_project(ring) for ring in water.get(LAYER_ISLAND, ()) if len(ring) >= 4]
    rivers_water, rivers_islands = (
        [_project(ring) for ring in rings if len(ring) >= 4] for rings in estuaries
    )
    packed: list[tuple[int, int, npt.NDArray[np.floating[Any]]]] = []
    for level, top in enumerate(LEVEL_MAX_ZOOM):
        last = level == len(LEVEL_MAX_ZOOM) - 1
        tolerance = TOLERANCE_PX / (TILE_SIZE * 2.0**top)
        if level < COAST_FIRST_LEVEL or level not in coast:
            tolerance = 0.0 if last else tolerance
            for layer, rings in (
                (LAYER_COUNTRY, country_rings),
                (LAYER_STATE, state_rings),
                (LAYER_LAKE, lakes),
                (LAYER_ISLAND, islands),
            ):
                packed.extend((layer, level, ring) for ring in _simplify(rings, tolerance))
            continue
        land: list[shapely.Geometry] = []  # the land's pieces, to clip the borders to
        packed.extend(_coast_level(level, tolerance, coast[level](), lakes, islands, land))
        for layer, rings in ((LAYER_LAKE, rivers_water), (LAYER_ISLAND, rivers_islands)):
            packed.extend((layer, level, ring) for ring in _simplify(rings, tolerance))
        land_tree = shapely.STRtree(np.array(land, dtype=object))
        for layer, rings in ((LAYER_BORDER, country_rings), (LAYER_STATE_LINE, state_rings)):
            lines = _on_land(_shared_edges(rings), tolerance, land_tree)
            packed.extend((layer, level, line) for line in lines)
        del land, land_tree
    packed.extend(_rivers([_project(line) for line in water.get(LAYER_RIVER, ())]))
    return _pack(packed)


def _coast_level(
    level: int,
    tolerance: float,
    gshhg: Mapping[int, Sequence[Ring]],
    ne_lakes: list[Xy],
    ne_islands: list[Xy],
    land_pieces: list[shapely.Geometry],
) -> Iterable[tuple[int, int, npt.NDArray[np.floating[Any]]]]:
    """GSHHG's land, lakes and lake islands at one level, cut into pieces (the land's also
    appended to `land_pieces`); Natural Earth's lakes (and their islands) where GSHHG has
    no lake (reservoirs, mostly)."""
    land = [ring for g in GSHHG_LAND_LEVELS for ring in gshhg.get(g, ())]
    degrees = COAST_TOLERANCE_DEG[level]
    gshhg_lakes = list(_polygons(gshhg.get(GSHHG_LAKE_LEVEL, ()), degrees))
    for layer, polygons in (
        (LAYER_LAND, _polygons(land, degrees)),
        (LAYER_LAKE, iter(gshhg_lakes)),
        (LAYER_ISLAND, _polygons(gshhg.get(GSHHG_ISLAND_LEVEL, ()), degrees)),
    ):
        for polygon in polygons:
            for piece in _pieces(polygon):
                if layer == LAYER_LAND:
                    land_pieces.append(piece)
                coords = shapely.get_coordinates(piece.exterior).astype(np.float32)
                yield layer, level, coords
    kept = _not_covered(ne_lakes, gshhg_lakes)
    yield from ((LAYER_LAKE, level, ring) for ring in _simplify(kept, tolerance))
    if kept:
        tree = shapely.STRtree(_valid(kept))
        firsts = shapely.points([ring[0] for ring in ne_islands]) if ne_islands else []
        inside = set(tree.query(firsts, predicate="within")[0].tolist()) if ne_islands else set()
        chosen = [ring for i, ring in enumerate(ne_islands) if i in inside]
        yield from ((LAYER_ISLAND, level, ring) for ring in _simplify(chosen, tolerance))


def _polygons(rings: Sequence[Ring], degrees: float) -> Iterator[shapely.Geometry]:
    """Valid polygons of the rings (lon, lat), simplified to `degrees` with their topology
    kept, then projected (a cut along a quadtree needs valid input; Mercator maps each axis
    on its own, monotonically, so it keeps a valid polygon valid). A chunk at a time, to
    hold one copy of the shoreline, not three."""
    for start in range(0, len(rings), POLYGON_CHUNK):
        chunk = rings[start : start + POLYGON_CHUNK]
        polygons = np.array([shapely.Polygon(ring) for ring in chunk], dtype=object)
        polygons = shapely.simplify(polygons, degrees, preserve_topology=True)
        invalid = ~shapely.is_valid(polygons)
        polygons[invalid] = shapely.make_valid(polygons[invalid])
        projected = shapely.transform(polygons, _project)
        yield from (p for g in projected for p in shapely.get_parts(g) if p.geom_type == "Polygon")


def _pieces(polygon: shapely.Geometry) -> Iterable[shapely.Geometry]:
    """The polygon, or when it has more than PIECE_POINTS vertices, its parts in the
    quadrants of its bounding box, recursively. GSHHG's polygons have no holes (a lake is
    a polygon of its own), and a cut of one by a rectangle has none."""
    stack = [polygon]
    while stack:
        geometry = stack.pop()
        if shapely.get_num_coordinates(geometry) <= PIECE_POINTS:
            for part in shapely.get_parts(geometry):
                if part.geom_type == "Polygon" and not part.is_empty:
                    if shapely.get_num_coordinates(part.exterior) >= 4:
                        yield part
            continue
        x0, y0, x1, y1 = shapely.bounds(geometry).tolist()
        xm, ym = (x0 + x1) / 2, (y0 + y1) / 2
        for box in ((x0, y0, xm, ym), (xm, y0, x1, ym), (x0, ym, xm, y1), (xm, ym, x1, y1)):
            part = shapely.clip_by_rect(geometry, *box)
            if not part.is_empty:
                stack.append(part)


def _not_covered(lakes: list[Xy], covering: list[shapely.Geometry]) -> list[Xy]:
    """The lakes that meet none of the covering polygons."""
    if not lakes or not covering:
        return list(lakes)
    tree = shapely.STRtree(covering)
    hits = tree.query(_valid(lakes), predicate="intersects")[0]
    met = set(hits.tolist())
    return [lake for i, lake in enumerate(lakes) if i not in met]


def _valid(rings: list[Xy]) -> npt.NDArray[Any]:
    return shapely.make_valid(np.array([shapely.Polygon(ring) for ring in rings], dtype=object))


def _shared_edges(rings: Sequence[Xy]) -> shapely.Geometry:
    """The edges that two of the rings share (a border between two countries or states;
    Natural Earth and TIGER give neighbours the same vertices), merged into lines."""
    if not rings:
        return shapely.MultiLineString()
    starts = np.concatenate([ring[:-1] for ring in rings])
    ends = np.concatenate([ring[1:] for ring in rings])
    a, b = np.rint(starts * 1e9).astype(np.int64), np.rint(ends * 1e9).astype(np.int64)
    swap = (a[:, 0] > b[:, 0]) | ((a[:, 0] == b[:, 0]) & (a[:, 1] > b[:, 1]))
    first = np.where(swap[:, None], b, a)
    second = np.where(swap[:, None], a, b)
    keys = np.concatenate([first, second], axis=1)
    unique, index, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
    shared = index[(counts >= 2) & np.any(unique[:, :2] != unique[:, 2:], axis=1)]
    segments = np.stack([starts[shared], ends[shared]], axis=1)
    return shapely.line_merge(shapely.multilinestrings(shapely.linestrings(segments)))


def _on_land(lines: shapely.Geometry, tolerance: float, land: shapely.STRtree) -> list[Xy]:
    """The lines simplified, then clipped to the land polygons of the tree, in pieces of
    at most PIECE_POINTS vertices."""
    simplified = shapely.get_parts(shapely.simplify(lines, tolerance, preserve_topology=False))
    line_index, polygon_index = land.query(simplified, predicate="intersects")
    clipped = shapely.intersection(
        simplified[line_index], np.asarray(land.geometries)[polygon_index]
    )
    parts = [p for p in shapely.get_parts(clipped) if p.geom_type == "LineString"]
    if not parts:
        return []
    merged = shapely.line_merge(shapely.multilinestrings(parts))
    out: list[Xy] = []
    for line in shapely.get_parts(merged):
        coords = shapely.get_coordinates(line)
        step = PIECE_POINTS - 1
        out.extend(coords[i : i + PIECE_POINTS] for i in range(0, max(len(coords) - 1, 1), step))
    return [c for c in out if len(c) >= 2]


def _rivers(lines: list[Xy]) -> Iterable[tuple[int, int, Xy]]:
    lines = [line for line in lines if len(line) >= 2]
    lengths = np.asarray([np.hypot(*np.diff(line, axis=0).T).sum() for line in lines])
    for level, top in enumerate(LEVEL_MAX_ZOOM):
        if level < RIVER_FIRST_LEVEL:
            continue
        min_px, at_zoom = RIVER_MIN_PX[level]
        long_enough = [
            line
            for line, n in zip(lines, lengths, strict=True)
            if n * TILE_SIZE * 2.0**at_zoom >= min_px
        ]
        tolerance = TOLERANCE_PX / (TILE_SIZE * 2.0**top)
        for line in _simplify(long_enough, tolerance, min_points=2):
            yield LAYER_RIVER, level, line


def _project(ring: Ring) -> Xy:
    x, y = lonlat_to_world(ring[:, 0], ring[:, 1])
    return np.stack([x, y], axis=1)


def _simplify(rings: list[Xy], tolerance: float, min_points: int = 4) -> Iterable[Xy]:
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


def _pack(
    rings: list[tuple[int, int, npt.NDArray[np.floating[Any]]]],
) -> dict[str, npt.NDArray[Any]]:
    # each layer's rings at each level back to back, in the order made: a render reads
    # them as slices of the memory-mapped arrays, not copies
    rings = sorted(rings, key=lambda ring: (ring[0], ring[1]))
    offsets = np.zeros(len(rings) + 1, dtype=np.int64)
    np.cumsum([len(r) for _l, _v, r in rings], out=offsets[1:])
    bbox = np.asarray(
        [(r[:, 0].min(), r[:, 1].min(), r[:, 0].max(), r[:, 1].max()) for _l, _v, r in rings],
        dtype=np.float64,
    )
    return {
        # float32: 0.06 px at zoom 12, and half the size of float64 on disk and in memory
        "bm_xy": np.concatenate([r for _l, _v, r in rings], dtype=np.float32),
        "bm_ring_off": offsets,
        "bm_ring_bbox": bbox,
        "bm_ring_layer": np.asarray([layer for layer, _v, _r in rings], dtype=np.uint8),
        "bm_ring_level": np.asarray([level for _l, level, _r in rings], dtype=np.uint8),
    }
