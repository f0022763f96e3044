"""Great-circle geometry on a spherical Earth (mean radius), vectorised with numpy.

Nearest-neighbour search runs on unit vectors: the straight-line (chord) distance between
two points on the unit sphere grows monotonically with their great-circle distance, so a
KD-tree over unit vectors finds the great-circle nearest exactly, poles and antimeridian
included.
"""

from __future__ import annotations

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


def ring_polygons(xy: npt.ArrayLike, ring_offsets: npt.ArrayLike) -> Any:
    """Polygons (prepared, in an STRtree) of rings stored flat: every ring's points in `xy`
    and where each ring starts in `ring_offsets` (its last entry the end); the tree's
    index i is ring i."""
    offsets = np.asarray(ring_offsets)
    ring_ids = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    polygons = shapely.polygons(shapely.linearrings(np.asarray(xy), indices=ring_ids))
    shapely.prepare(polygons)
    return shapely.STRtree(polygons)
