"""Great-circle geometry on a spherical Earth (mean radius), vectorised with numpy.

Nearest-neighbour search runs on unit vectors: the straight-line (chord) distance between
two points on the unit sphere grows monotonically with their great-circle distance, so a
KD-tree over unit vectors finds the great-circle nearest exactly, poles and antimeridian
included.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import numpy.typing as npt
import shapely

EARTH_RADIUS_KM = 6371.0088  # IUGG mean radius

FloatArray = npt.NDArray[np.float64]


def unit_vectors(lat_deg: npt.ArrayLike, lon_deg: npt.ArrayLike) -> FloatArray:
    lat = np.radians(np.asarray(lat_deg, dtype=np.float64))
    lon = np.radians(np.asarray(lon_deg, dtype=np.float64))
    cos_lat = np.cos(lat)
    return np.stack([cos_lat * np.cos(lon), cos_lat * np.sin(lon), np.sin(lat)], axis=-1)


def unit_vector(lat_deg: float, lon_deg: float) -> tuple[float, float, float]:
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    cos_lat = math.cos(lat)
    return (cos_lat * math.cos(lon), cos_lat * math.sin(lon), math.sin(lat))


def chord_to_km(chord: npt.ArrayLike) -> FloatArray:
    half = np.clip(np.asarray(chord, dtype=np.float64) / 2.0, 0.0, 1.0)
    return 2.0 * EARTH_RADIUS_KM * np.arcsin(half)


def km_to_chord(km: float) -> float:
    """The chord on the unit sphere that spans `km` of great-circle distance."""
    angle = min(km / EARTH_RADIUS_KM, math.pi)
    return 2.0 * math.sin(angle / 2.0)


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2.0 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def haversine_km_many(
    lat: float, lon: float, lats: npt.ArrayLike, lons: npt.ArrayLike
) -> FloatArray:
    p1 = math.radians(lat)
    p2 = np.radians(np.asarray(lats, dtype=np.float64))
    dp = p2 - p1
    dl = np.radians(np.asarray(lons, dtype=np.float64) - lon)
    h = np.sin(dp / 2) ** 2 + math.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2.0 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


RING_POLYGONS_KEPT = 256


class RingIndex:
    """Which of many rings, stored flat (every ring's points in `xy`, as x=lon, y=lat;
    ring i from `ring_offsets[i]` to `ring_offsets[i + 1]`), hold a point or come near it,
    in degrees as stored. The rings' boxes in an STRtree find the candidates; the polygon
    of each candidate decides, built from the (memory-mapped) points when first asked and
    kept for the RING_POLYGONS_KEPT last asked: a million points as GEOS polygons, all
    built, take about 80 MiB in every process."""

    def __init__(self, xy: npt.ArrayLike, ring_offsets: npt.ArrayLike) -> None:
        self._xy = xy
        self._offsets = np.asarray(ring_offsets, dtype=np.int64)
        points = np.asarray(xy, dtype=np.float64)
        starts = self._offsets[:-1]
        low = np.minimum.reduceat(points, starts, axis=0)
        high = np.maximum.reduceat(points, starts, axis=0)
        self._tree = shapely.STRtree(shapely.box(low[:, 0], low[:, 1], high[:, 0], high[:, 1]))
        # the polygons of the rings last asked about, built on demand: places asked about
        # cluster, and the memory stays bounded
        self._polygon = functools.lru_cache(maxsize=RING_POLYGONS_KEPT)(self._build)

    def _build(self, ring: int) -> Any:
        start, end = self._offsets[ring], self._offsets[ring + 1]
        return shapely.Polygon(np.asarray(self._xy[start:end], dtype=np.float64))  # type: ignore[index]

    def _holds(self, ring: int, lon: float, lat: float) -> bool:
        return bool(shapely.contains_xy(self._polygon(ring), lon, lat))

    def _distance(self, ring: int, lon: float, lat: float) -> float:
        """From the point to the ring taken as a polygon: 0 inside it."""
        return float(shapely.distance(self._polygon(ring), shapely.Point(lon, lat)))

    def containing(self, lon: float, lat: float) -> list[int]:
        """The rings that hold the point (its even-odd count per area is the caller's)."""
        candidates = self._tree.query(shapely.Point(lon, lat))
        return [int(ring) for ring in candidates if self._holds(int(ring), lon, lat)]

    def within(self, lon: float, lat: float, distance: float) -> list[int]:
        """The rings that hold the point or pass within `distance` of it."""
        box = shapely.box(lon - distance, lat - distance, lon + distance, lat + distance)
        return [
            int(ring)
            for ring in self._tree.query(box)
            if self._distance(int(ring), lon, lat) <= distance
        ]

    def nearest(self, lon: float, lat: float, max_distance: float) -> int | None:
        """The ring nearest the point within `max_distance`, if any (the first on a tie)."""
        found = [
            (self._distance(ring, lon, lat), ring) for ring in self.within(lon, lat, max_distance)
        ]
        return min(found)[1] if found else None
