"""Which characters a font can draw, read from its `cmap` table (code point to glyph).

A character the font has no glyph for is drawn as its .notdef glyph, an empty box: Pillow
gives no other sign of it, so the map checks labels against this set before drawing them.
Pillow exposes no character map, and fontTools (some 5 MB) would be a dependency for one
table: these few lines read the two formats every TrueType and OpenType font carries.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

# (platform, encoding) of the Unicode subtables, the full repertoire (format 12) first
_UNICODE_SUBTABLES = ((3, 10), (0, 6), (0, 4), (3, 1), (0, 3), (0, 2), (0, 1), (0, 0))
_ASCII = frozenset(range(0x20, 0x7F))


def characters(font: ImageFont.FreeTypeFont | ImageFont.ImageFont) -> frozenset[int]:
    """The code points `font` has a glyph for; printable ASCII for Pillow's bitmap font
    (used only where Pillow was built without FreeType)."""
    if not isinstance(font, ImageFont.FreeTypeFont):
        return _ASCII
    if isinstance(font.path, str | Path):
        return _file_characters(str(font.path), font.index)
    return cmap(font.font_bytes, font.index)


@lru_cache(maxsize=4)
def _file_characters(path: str, index: int) -> frozenset[int]:
    return cmap(Path(path).read_bytes(), index)


def cmap(data: bytes, index: int = 0) -> frozenset[int]:
    """The code points mapped to a glyph other than .notdef in a font file's (or, in a
    collection, its `index`th font's) Unicode cmap subtable; empty if it has none."""
    start = struct.unpack_from(">I", data, 12 + 4 * index)[0] if data[:4] == b"ttcf" else 0
    (tables,) = struct.unpack_from(">H", data, start + 4)
    for i in range(tables):
        tag, _checksum, table, _length = struct.unpack_from(">4sIII", data, start + 12 + 16 * i)
        if tag == b"cmap":
            break
    else:
        return frozenset()
    (count,) = struct.unpack_from(">H", data, table + 2)
    subtables = {}
    for i in range(count):
        platform, encoding, offset = struct.unpack_from(">HHI", data, table + 4 + 8 * i)
        subtables[(platform, encoding)] = table + offset
    for key in _UNICODE_SUBTABLES:
        if key not in subtables:
            continue
        (form,) = struct.unpack_from(">H", data, subtables[key])
        if form == 4:
            return _format_4(data, subtables[key])
        if form == 12:
            return _format_12(data, subtables[key])
    return frozenset()


def _format_4(data: bytes, at: int) -> frozenset[int]:
    """Segments of the Basic Multilingual Plane, each mapped by a delta or by an array."""
    (seg_x2,) = struct.unpack_from(">H", data, at + 6)
    segments = seg_x2 // 2
    ends = struct.unpack_from(f">{segments}H", data, at + 14)
    firsts = struct.unpack_from(f">{segments}H", data, at + 16 + seg_x2)
    deltas = struct.unpack_from(f">{segments}H", data, at + 16 + 2 * seg_x2)
    range_offsets_at = at + 16 + 3 * seg_x2
    range_offsets = struct.unpack_from(f">{segments}H", data, range_offsets_at)
    found: set[int] = set()
    for i, (first, end, delta, range_offset) in enumerate(
        zip(firsts, ends, deltas, range_offsets, strict=True)
    ):
        for code in range(first, min(end, 0xFFFE) + 1):
            if range_offset == 0:
                glyph = (code + delta) & 0xFFFF
            else:  # the offset counts from its own place in the idRangeOffset array
                where = range_offsets_at + 2 * i + range_offset + 2 * (code - first)
                (glyph,) = struct.unpack_from(">H", data, where)
                glyph = (glyph + delta) & 0xFFFF if glyph else 0
            if glyph:
                found.add(code)
    return frozenset(found)


def _format_12(data: bytes, at: int) -> frozenset[int]:
    """Groups of consecutive code points mapped to consecutive glyphs, all of Unicode."""
    (groups,) = struct.unpack_from(">I", data, at + 12)
    found: set[int] = set()
    for i in range(groups):
        first, last, glyph = struct.unpack_from(">III", data, at + 16 + 12 * i)
        found.update(range(first + (glyph == 0), last + 1))
    return frozenset(found)
