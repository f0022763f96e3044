"""A minimal ESRI shapefile reader: polygon rings from the .shp, text columns from the .dbf.

Enough for the public-domain boundary files we index (Natural Earth countries, Census
cartographic boundaries); no projection handling (both are plain lon/lat degrees)."""

from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np

from app.geodata.indices.wkb import Ring


def dbf_column(data: bytes, column: str) -> list[str]:
    """One text column of a dBASE table (the attributes beside a shapefile), by record."""
    count, header_length, record_length = struct.unpack_from("<IHH", data, 4)
    offset, position = 32, 1  # a record starts with its deletion flag
    while data[offset] != 0x0D:
        name = data[offset : offset + 11].split(b"\0")[0].decode("ascii")
        length = data[offset + 16]
        if name == column:
            return [
                data[start + position : start + position + length].decode("latin-1").strip(" \0")
                for start in range(
                    header_length, header_length + count * record_length, record_length
                )
            ]
        position += length
        offset += 32
    raise KeyError(column)


def polygon_records(data: bytes) -> Iterator[tuple[int, list[Ring]]]:
    """(record number, its rings) for every polygon record of a .shp file. Rings keep the
    file's orientation (outer clockwise, holes counter-clockwise); the even-odd rule over
    a record's rings tells inside from outside without pairing holes with shells."""
    offset, record = 100, 0  # file header
    while offset + 8 <= len(data):
        (length_words,) = struct.unpack_from(">i", data, offset + 4)
        content = offset + 8
        offset = content + 2 * length_words
        number = record
        record += 1
        (shape_type,) = struct.unpack_from("<i", data, content)
        if shape_type not in (5, 15, 25):  # polygon (plain, Z, M)
            continue
        num_parts, num_points = struct.unpack_from("<2i", data, content + 36)
        parts = list(struct.unpack_from(f"<{num_parts}i", data, content + 44)) + [num_points]
        points_at = content + 44 + 4 * num_parts
        points = np.frombuffer(data, dtype="<f8", count=2 * num_points, offset=points_at)
        points = points.reshape(num_points, 2)
        yield (
            number,
            [points[a:b].astype(np.float64) for a, b in zip(parts, parts[1:], strict=False)],
        )
