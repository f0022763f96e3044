"""The share of each disc inside a shape (`within`: a bbox or a polygon) for rings.py:
a fixed pattern of points spread evenly over the disc, each tested against the shape on a
plane in km around the shape's centre (shapes fit within 100 km of it: shape_rules.py)."""

from __future__ import annotations

import hashlib
from math import cos, pi, radians, sqrt

import numpy as np
import numpy.typing as npt
import shapely

from app.geodata.schemas import MAX_RADIUS_M, Circle, Shape
from app.geodata.shape_rules import KM_PER_DEGREE_LAT, KM_PER_DEGREE_LON, centre, local_km

FloatArray = npt.NDArray[np.float64]
# points per disc: a disc's share is known to 1/61 (~2 %), and a metro's ~1,000 ZCTAs
# take ~60,000 point tests (a few ms)
PATTERN_POINTS = 61


def _pattern(n: int = PATTERN_POINTS) -> tuple[FloatArray, FloatArray]:
    """n points spread evenly over the unit disc (a sunflower: each an equal area)."""
    k = np.arange(n) + 0.5
    r = np.sqrt(k / n)
    theta = k * pi * (3 - sqrt(5))
    return r * np.cos(theta), r * np.sin(theta)


PATTERN_X, PATTERN_Y = _pattern()


def enclosing(shape: Shape) -> Circle:
    """The circle about the shape's centre that holds it (where to look for discs)."""
    lon0, lat0 = centre(shape.vertices)
    reach = max(sqrt(x * x + y * y) for x, y in local_km(shape.vertices, lon0, lat0))
    return Circle(lat=lat0, lon=lon0, radius_m=min(max(reach * 1000, 1.0), float(MAX_RADIUS_M)))


def disc_shares(
    shape: Shape, lat: FloatArray, lon: FloatArray, radius_km: FloatArray
) -> FloatArray:
    """The share of each disc (centre lat, lon; radius km) inside the shape."""
    if len(lat) == 0:
        return np.zeros(0)
    lon0, lat0 = centre(shape.vertices)
    outline = shapely.Polygon(local_km(shape.vertices, lon0, lat0))
    shapely.prepare(outline)
    kx = KM_PER_DEGREE_LON * cos(radians(lat0))
    x = ((np.asarray(lon) - lon0 + 180) % 360 - 180) * kx
    y = (np.asarray(lat) - lat0) * KM_PER_DEGREE_LAT
    xs = x[:, None] + radius_km[:, None] * PATTERN_X[None, :]
    ys = y[:, None] + radius_km[:, None] * PATTERN_Y[None, :]
    inside = shapely.contains_xy(outline, xs.ravel(), ys.ravel()).reshape(xs.shape)
    return np.asarray(inside.mean(axis=1), dtype=np.float64)


def describe(shape: Shape) -> tuple[str, str]:
    """The shape's `name` and `areaId` in an answer."""
    if shape.bbox is not None:
        box = ",".join(f"{v:.5f}" for v in shape.bbox)
        return f"bbox {box}", f"bbox:{box}"
    lon0, lat0 = centre(shape.vertices)
    n = len(shape.vertices)
    digest = hashlib.sha256(repr(shape.vertices).encode()).hexdigest()[:8]
    return (
        f"polygon of {n} vertices around {lat0:.5f}, {lon0:.5f}",
        f"polygon:{n}:{lat0:.5f},{lon0:.5f}:{digest}",
    )
