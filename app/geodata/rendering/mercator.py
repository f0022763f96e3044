"""Web Mercator (EPSG:3857) in world units: x, y in [0, 1], y growing southwards.

At zoom z the world is 256 * 2**z pixels wide, as on the usual XYZ tile servers.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

MAX_LATITUDE = 85.0511287798066  # where the square Web Mercator world ends
TILE_SIZE = 256


def lonlat_to_world(
    lon: npt.ArrayLike, lat: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    lon_arr = np.asarray(lon, dtype=np.float64)
    lat_arr = np.clip(np.asarray(lat, dtype=np.float64), -MAX_LATITUDE, MAX_LATITUDE)
    x = (lon_arr + 180.0) / 360.0
    phi = np.radians(lat_arr)
    y = 0.5 - np.log(np.tan(np.pi / 4 + phi / 2)) / (2 * np.pi)
    return x, y


def world_x(lon: float) -> float:
    return (lon + 180.0) / 360.0


def world_y(lat: float) -> float:
    lat = max(-MAX_LATITUDE, min(MAX_LATITUDE, lat))
    return 0.5 - math.log(math.tan(math.pi / 4 + math.radians(lat) / 2)) / (2 * math.pi)


def world_to_lon(x: float) -> float:
    return x * 360.0 - 180.0


def world_to_lat(y: float) -> float:
    return math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * y))))


def world_pixels(zoom: float) -> float:
    return TILE_SIZE * 2.0**zoom
