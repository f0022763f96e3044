"""Wide rivers and estuaries as water areas: the parts of Natural Earth's 1:10m ocean that
reach far into GSHHG's land (the Hudson above Manhattan's tip, the Potomac, the St.
Lawrence below Montreal, the Mekong's and the Ganges' mouths). GSHHG closes a river at its
mouth and has no river areas, so at zooms 9-12 these were drawn as land.

Comparing the two shorelines over the whole world (442 s of build) finds hundreds of
slivers where two generalisations of one coast disagree. Here only Natural Earth's ocean
vertices are tested: a vertex inside GSHHG's land (not on its lakes) with no GSHHG
shoreline within DEEP_KM is a witness that the ocean goes up a river. Around each cluster of
witnesses the ocean is clipped and intersected with GSHHG's land; a part is kept when a
witness lies on it (a sliver along a coast has none), then grown by MOUTH_DEG within the
ocean so that it overlaps GSHHG's own water at the mouth at either GSHHG resolution.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import shapely

from app.geodata.indices.wkb import Ring

DEEP_KM = 3.0  # Natural Earth's and GSHHG's coasts differ by up to ~1-2 km where both hold
KM_PER_DEG_LAT = 111.32
SEGMENT_POINTS = 64  # shoreline vertices per line of the distance tree
CLUSTER_DEG = 0.25  # witnesses in touching cells of this size form one area
MARGIN_DEG = 0.1  # an area's box reaches this far past its witnesses
MOUTH_DEG = 0.005  # ~500 m: a part is grown this far within the ocean
PIECE_POINTS = 4096  # polygons are cut into pieces of at most this many vertices
EXPANSIONS = 4  # times an area's box may widen to hold a part that runs out of it
# a bay that both datasets hold is no river: a part wider than this on average is left out
MAX_MEAN_WIDTH_KM = 12.0
# Beyond these latitudes GSHHG's coast is an ice front (Greenland's and Ellesmere's fjords
# under floating ice, Antarctica's shelves) where Natural Earth has open water: no rivers
LATITUDES = (-60.0, 70.0)


def estuary_polygons(
    ocean: Sequence[Ring],
    land: Sequence[Ring],
    lakes: Sequence[Ring],
    islands: Sequence[Ring],
) -> tuple[list[Ring], list[Ring]]:
    """The water areas Natural Earth's ocean (`ocean`: the rings of its polygon, even-odd)
    has where GSHHG has land (`land`, with `lakes` and the `islands` in them, one
    resolution), as (their outer rings, their islands' rings), lon/lat."""
    land_whole = _polygons(land)
    witnesses = _witnesses(ocean, land, land_whole, lakes, islands)
    south, north = LATITUDES
    witnesses = witnesses[(witnesses[:, 1] >= south) & (witnesses[:, 1] <= north)]
    if len(witnesses) == 0:
        return [], []
    # cut into pieces first: a clip costs what the whole polygon has (Eurasia: 1M vertices)
    ocean_polygons = _cut(_polygons(ocean, repair=False))
    invalid = ~shapely.is_valid(ocean_polygons)  # repaired in pieces: cheaper than whole
    ocean_polygons[invalid] = shapely.make_valid(ocean_polygons[invalid])
    ocean_tree = shapely.STRtree(ocean_polygons)
    land_polygons = _cut(land_whole)
    land_tree = shapely.STRtree(land_polygons)
    out: list[Ring] = []
    holes: list[Ring] = []
    for box in _areas(witnesses):
        found = _inland_parts(box, witnesses, ocean_polygons, ocean_tree, land_polygons, land_tree)
        if found is None:
            continue
        local, kept = found
        grown = shapely.intersection(local, shapely.buffer(shapely.union_all(kept), MOUTH_DEG))
        for part in shapely.get_parts(grown):
            if part.geom_type == "Polygon" and not part.is_empty:
                out.append(shapely.get_coordinates(part.exterior))
                holes.extend(shapely.get_coordinates(hole) for hole in part.interiors)
    return out, holes


def _inland_parts(
    box: shapely.Geometry,
    witnesses: npt.NDArray[np.float64],
    ocean_polygons: npt.NDArray[np.object_],
    ocean_tree: shapely.STRtree,
    land_polygons: npt.NDArray[np.object_],
    land_tree: shapely.STRtree,
) -> tuple[shapely.Geometry, npt.NDArray[np.object_]] | None:
    """(the ocean clipped to the area, the parts of it on the land that a witness in the
    area lies on). A part that runs out of the box (witnesses are only where the ocean is
    deep in the land, not at a river's mouth) widens the box, up to EXPANSIONS times."""
    for _attempt in range(EXPANSIONS + 1):
        x0, y0, x1, y1 = shapely.bounds(box).tolist()
        local = _clipped_ocean(ocean_polygons, ocean_tree, box)
        if local.is_empty:
            return None
        # the land's pieces do not overlap: the ocean on the land is the union of what it
        # has on each (a union of those small bits, not of the land's pieces)
        near_land = shapely.clip_by_rect(land_polygons[land_tree.query(box)], x0, y0, x1, y1)
        bits = shapely.get_parts(shapely.intersection(local, near_land))
        bits = bits[shapely.get_type_id(bits) == 3]  # polygons only
        inland = shapely.get_parts(shapely.union_all(bits)) if len(bits) else bits
        inland = inland[shapely.get_type_id(inland) == 3]
        if len(inland) == 0:
            return None
        inside = (witnesses[:, 0] >= x0) & (witnesses[:, 0] <= x1)
        inside &= (witnesses[:, 1] >= y0) & (witnesses[:, 1] <= y1)
        points = shapely.points(witnesses[inside])
        hit = shapely.STRtree(inland).query(points, predicate="dwithin", distance=1e-7)[1]
        kept = inland[np.unique(hit)]
        kept = kept[[_mean_width_km(p) <= MAX_MEAN_WIDTH_KM for p in kept]]
        if len(kept) == 0:
            return None
        kx0, ky0, kx1, ky1 = shapely.bounds(shapely.union_all(kept)).tolist()
        edge = MOUTH_DEG
        if kx0 > x0 + edge and ky0 > y0 + edge and kx1 < x1 - edge and ky1 < y1 - edge:
            break
        grow = MARGIN_DEG * 2**_attempt
        box = shapely.box(
            min(x0, kx0) - grow, min(y0, ky0) - grow, max(x1, kx1) + grow, max(y1, ky1) + grow
        )
    return local, kept


def _witnesses(
    ocean: Sequence[Ring],
    land: Sequence[Ring],
    land_polygons: npt.NDArray[np.object_],
    lakes: Sequence[Ring],
    islands: Sequence[Ring],
) -> npt.NDArray[np.float64]:
    """The ocean's vertices on GSHHG's land (`land_polygons`: its rings' polygons), off its
    lakes, DEEP_KM or more from its shore."""
    vertices = np.concatenate([np.asarray(r)[:-1] for r in ocean if len(r) >= 4])
    shore = [np.asarray(r) for r in (*land, *lakes, *islands) if len(r) >= 4]
    segments = [
        r[i : i + SEGMENT_POINTS + 1] for r in shore for i in range(0, len(r) - 1, SEGMENT_POINTS)
    ]
    lines = shapely.linestrings(
        np.concatenate(segments),
        indices=np.repeat(np.arange(len(segments)), [len(s) for s in segments]),
    )
    points = shapely.points(vertices)
    near = shapely.STRtree(lines).query(
        points, predicate="dwithin", distance=DEEP_KM / KM_PER_DEG_LAT
    )[0]
    far = np.setdiff1d(np.arange(len(vertices)), near)
    if len(far) == 0:
        return np.zeros((0, 2))
    # a tree of the few far points, queried with each polygon: the polygon is prepared
    # once (a point-in-polygon test per point against a continent would take minutes)
    far_tree = shapely.STRtree(points[far])
    parity = np.zeros(len(far), dtype=np.int8)
    for polygons in (land_polygons, _polygons(lakes), _polygons(islands)):
        if len(polygons):
            parity ^= (
                np.bincount(
                    far_tree.query(polygons, predicate="contains")[1], minlength=len(far)
                ).astype(np.int8)
                & 1
            )
    return vertices[far[parity == 1]]


def _polygons(rings: Sequence[Ring], repair: bool = True) -> npt.NDArray[np.object_]:
    usable = [np.asarray(r) for r in rings if len(r) >= 4]
    if not usable:
        return np.array([], dtype=object)
    polygons = shapely.polygons(
        shapely.linearrings(
            np.concatenate(usable),
            indices=np.repeat(np.arange(len(usable)), [len(r) for r in usable]),
        )
    )
    if repair:
        invalid = ~shapely.is_valid(polygons)
        polygons[invalid] = shapely.make_valid(polygons[invalid])
    return np.asarray(polygons, dtype=object)


def _cut(polygons: npt.NDArray[np.object_]) -> npt.NDArray[np.object_]:
    """The polygons, those of more than PIECE_POINTS vertices cut along a quadtree of their
    bounding box into pieces that do not overlap (so the pieces of one ring, combined
    even-odd, are the ring's polygon again)."""
    done: list[shapely.Geometry] = []
    stack = list(polygons)
    while stack:
        geometry = stack.pop()
        if shapely.get_num_coordinates(geometry) <= PIECE_POINTS:
            done.extend(p for p in shapely.get_parts(geometry) if p.geom_type == "Polygon")
            continue
        x0, y0, x1, y1 = shapely.bounds(geometry).tolist()
        xm, ym = (x0 + x1) / 2, (y0 + y1) / 2
        for box in ((x0, y0, xm, ym), (xm, y0, x1, ym), (x0, ym, xm, y1), (xm, ym, x1, y1)):
            part = shapely.clip_by_rect(geometry, *box)
            if not part.is_empty:
                stack.append(part)
    return np.asarray(done, dtype=object)


def _areas(witnesses: npt.NDArray[np.float64]) -> list[shapely.Geometry]:
    """Boxes around clusters of witnesses: the cells that hold one, merged where they touch."""
    cells = np.unique(np.floor(witnesses / CLUSTER_DEG).astype(np.int64), axis=0)
    boxes = shapely.box(
        cells[:, 0] * CLUSTER_DEG - MARGIN_DEG,
        cells[:, 1] * CLUSTER_DEG - MARGIN_DEG,
        (cells[:, 0] + 1) * CLUSTER_DEG + MARGIN_DEG,
        (cells[:, 1] + 1) * CLUSTER_DEG + MARGIN_DEG,
    )
    merged = shapely.get_parts(shapely.union_all(boxes))
    return [shapely.envelope(part) for part in merged]


def _clipped_ocean(
    polygons: npt.NDArray[np.object_], tree: shapely.STRtree, box: shapely.Geometry
) -> shapely.Geometry:
    """The ocean inside the box: the pieces of its rings (repaired) that reach the box,
    each clipped, combined even-odd."""
    x0, y0, x1, y1 = shapely.bounds(box).tolist()
    result = shapely.Polygon()
    for index in tree.query(box).tolist():
        clipped = shapely.clip_by_rect(polygons[index], x0, y0, x1, y1)
        result = shapely.symmetric_difference(result, clipped)
    return result


def _mean_width_km(polygon: shapely.Geometry) -> float:
    """Twice the area over the perimeter, in km, roughly (a degree of longitude taken at
    the polygon's latitude for the area, between that and a degree of latitude for the
    perimeter)."""
    if polygon.length == 0:
        return 0.0
    shrink = float(np.cos(np.radians(polygon.centroid.y)))
    area_km2 = polygon.area * KM_PER_DEG_LAT**2 * shrink
    return 2 * area_km2 / (polygon.length * KM_PER_DEG_LAT * np.sqrt(shrink))
