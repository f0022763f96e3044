"""Just enough Well-Known Binary to read (Multi)Polygon rings as numpy arrays."""

from __future__ import annotations

import struct
from typing import Literal

import numpy as np
import numpy.typing as npt

Ring = npt.NDArray[np.float64]  # shape (n, 2): lon, lat

_POLYGON, _MULTIPOLYGON = 3, 6


def polygon_rings(wkb: bytes) -> list[Ring]:
    """All rings (exteriors and holes) of a Polygon or MultiPolygon, as (lon, lat) arrays."""
    rings: list[Ring] = []
    _read_geometry(memoryview(wkb), 0, rings)
    return rings


def _read_geometry(buf: memoryview, offset: int, rings: list[Ring]) -> int:
    order: Literal["<", ">"] = "<" if buf[offset] == 1 else ">"
    (kind,) = struct.unpack_from(order + "I", buf, offset + 1)
    offset += 5
    kind &= 0xFF  # ignore Z/M flags of extended WKB; coordinates are 2-D here
    if kind == _POLYGON:
        return _read_polygon(buf, offset, order, rings)
    if kind == _MULTIPOLYGON:
        (count,) = struct.unpack_from(order + "I", buf, offset)
        offset += 4
        for _ in range(count):
            offset = _read_geometry(buf, offset, rings)
        return offset
    raise ValueError(f"unsupported WKB geometry type {kind}")


def _read_polygon(buf: memoryview, offset: int, order: Literal["<", ">"], rings: list[Ring]) -> int:
    (ring_count,) = struct.unpack_from(order + "I", buf, offset)
    offset += 4
    dtype = np.dtype(np.float64).newbyteorder(order)
    for _ in range(ring_count):
        (points,) = struct.unpack_from(order + "I", buf, offset)
        offset += 4
        coords = np.frombuffer(buf, dtype=dtype, count=points * 2, offset=offset)
        rings.append(coords.reshape(points, 2).astype(np.float64))
        offset += points * 16
    return offset
