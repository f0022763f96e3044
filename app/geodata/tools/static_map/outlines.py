"""The choropleth's areas for the map app (ui://geosvc/map.html): what the image fills,
as outlines the app draws and hovers. Carried in the MCP result's `_meta` (OUTLINES_META),
never in `content` or `structuredContent`: a model is not handed coordinates it has no use
for, and the iframe needs no key and no request of its own (docs/TOOLS.md, "The
interactive map").

Sized for the view: each ring simplified to half a pixel of the view's zoom, quantized to
whole pixels of the next zoom (`zoom` in the payload; Leaflet's own pixel grid there), and
sent as its first point then deltas in Google's encoded polyline text (`encode`; x first).
Only the rings that reach the view. Over MAX_BYTES a coarser pass (a pixel of the view's
zoom); over it still, the outlines are left out and the payload says why (`omitted`),
which the app shows beside the legend."""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import numpy.typing as npt
import shapely

from app.geodata.rendering.area_fill import RGB
from app.geodata.rendering.labels import world_copies
from app.geodata.rendering.mercator import world_pixels
from app.geodata.rendering.view import View
from app.geodata.tools.static_map import area_shapes
from app.geodata.tools.static_map.choropleth import Layer

logger = logging.getLogger(__name__)

OUTLINES_META = "geosvc/choropleth"
MAX_BYTES = 300_000
VERSION = 1


def build(view: View, built: Layer, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """The payload for `_meta[OUTLINES_META]`: within `max_bytes` (its compact JSON), or
    `omitted` saying why. A failure here leaves the app's areas out, said so, rather than
    failing the map the caller asked for."""
    try:
        return _build(view, built, max_bytes)
    except Exception:
        logger.exception("choropleth outlines for the map app failed")
        return {
            "version": VERSION,
            "omitted": "the outlines could not be built; the legend is the image's",
            "bytes": 0,
        }


def _build(view: View, built: Layer, max_bytes: int) -> dict[str, Any]:
    size = 0
    for zoom, tolerance_px in ((view.zoom + 1, 0.5), (view.zoom, 1.0)):
        payload = _payload(view, built, zoom, tolerance_px)
        size = len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())
        if size <= max_bytes:
            return payload | {"bytes": size}
    return {
        "version": VERSION,
        "omitted": f"the {built.summary['areas']} in view need {-(-size // 1000)} KB of "
        f"outlines, over the app's {max_bytes // 1000} KB; the legend is the image's (zoom "
        "in, or a coarser level, to see them here)",
        "bytes": 0,
    }


def _payload(view: View, built: Layer, zoom: int, tolerance_px: float) -> dict[str, Any]:
    """Column by column (the areas' keys repeated would outweigh their outlines): names,
    figures (None: no data), classes (an index into the legend's; None: no data), and
    `rings` (encoded) or, for ZIP codes, `points` (whole pixels at `zoom`)."""
    shown, figs = built.shown, built.figures
    scale = world_pixels(zoom)
    colors = [c["color"] for c in built.summary["classes"]]
    classes = [None if c is None else colors.index(_hex(c)) for c in shown.colors]
    values = [
        None if c is None else _rounded(figs.values[i])
        for i, c in zip(shown.ids, classes, strict=True)
    ]
    shapes: dict[str, Any]
    if shown.index is None:  # ZIP codes: dots at their centres
        assert shown.x is not None
        assert shown.y is not None
        points = np.round(np.stack([shown.x, shown.y], axis=1) * scale).astype(np.int64)
        shapes = {"points": points.tolist()}
    else:
        tolerance = tolerance_px / world_pixels(view.zoom)
        rings = _rings(view, figs.level, shown.index, tolerance, scale)
        shapes = {"rings": [rings.get(i, []) for i in shown.index]}
    return {
        "version": VERSION,
        "zoom": zoom,
        "measure": figs.measure,
        "unit": figs.unit,
        "credit": figs.credit,
        "source": figs.source,
        "year": figs.year,
        "names": [name or "unnamed" for name in shown.names],
        "values": values,
        "classes": classes,
        **shapes,
    }


def _hex(color: RGB) -> str:
    return "#{:02x}{:02x}{:02x}".format(*color)


def _rounded(value: float) -> float | int:
    """Whole numbers from 100 up, 3 significant digits below: what the hover shows."""
    return round(value) if abs(value) >= 100 else float(f"{value:.3g}")


def _rings(
    view: View, level: str, index: list[int], tolerance: float, scale: float
) -> dict[int, list[str]]:
    """Each shown area's rings that reach the view (a world copy shifted into it),
    simplified to `tolerance` world units, encoded (`encode`) at `scale`, in one
    vectorised pass."""
    rings = area_shapes.by_level(level).rings(view.zoom)
    x0, y0, x1, y1 = view.world_bounds()
    wanted = np.isin(rings.area, np.asarray(index, dtype=np.int32))
    picked, shifts = [], []
    for shift in world_copies(view):
        box = rings.bbox
        hit = wanted & (box[:, 0] <= x1 - shift) & (box[:, 2] >= x0 - shift)
        hit &= (box[:, 1] <= y1) & (box[:, 3] >= y0)
        picked.append(np.nonzero(hit)[0])
        shifts.append(np.full(int(hit.sum()), float(shift)))
    chosen = np.concatenate(picked)
    if len(chosen) == 0:
        return {}
    lengths = rings.ends[chosen] - rings.starts[chosen]
    owner = np.repeat(np.arange(len(chosen)), lengths)
    first = np.repeat(np.cumsum(lengths) - lengths, lengths)
    xy = rings.xy[np.repeat(rings.starts[chosen], lengths) + np.arange(len(owner)) - first]
    xy[:, 0] += np.concatenate(shifts)[owner]
    lines = shapely.simplify(
        shapely.linestrings(xy, indices=owner), tolerance, preserve_topology=False
    )
    coords, which = shapely.get_coordinates(lines, return_index=True)
    pixels = np.round(coords * scale).astype(np.int64)
    # deltas within a ring (its first point from 0), repeats dropped
    steps = np.diff(pixels, axis=0, prepend=np.zeros((1, 2), dtype=np.int64))
    starts = np.r_[True, which[1:] != which[:-1]]
    steps[starts] = pixels[starts]
    keep = starts | np.any(steps != 0, axis=1)
    steps, which = steps[keep], which[keep]
    counts = np.bincount(which, minlength=len(chosen))
    text, ends = encode(steps)
    out: dict[int, list[str]] = {}
    begin, end_of = 0, np.cumsum(counts)
    for ring, count in enumerate(counts.tolist()):
        stop = int(end_of[ring])
        if count >= 4:  # a ring that shrinks under a triangle is left out
            low = int(ends[begin - 1]) if begin else 0
            out.setdefault(int(rings.area[chosen[ring]]), []).append(
                text[low : int(ends[stop - 1])]
            )
        begin = stop
    return out


def encode(steps: npt.NDArray[np.int64]) -> tuple[str, npt.NDArray[np.int64]]:
    """Points as Google's encoded polyline algorithm writes numbers (zigzag, 5-bit groups
    from the lowest, +63; https://developers.google.com/maps/documentation/utilities/
    polylinealgorithm), x then y, unscaled: all points' text back to back, and where
    each point's text ends."""
    values = steps.ravel()
    zigzag = (values << 1) ^ (values >> 63)
    groups = np.maximum(1, (np.floor(np.log2(np.maximum(zigzag, 1))).astype(np.int64) // 5) + 1)
    width = int(groups.max()) if len(groups) else 1
    shifted = (zigzag[:, None] >> (5 * np.arange(width))[None, :]) & 31
    more = np.arange(width)[None, :] < (groups[:, None] - 1)
    chars = (shifted | (more * 32)) + 63
    used = np.arange(width)[None, :] < groups[:, None]
    text = chars[used].astype(np.uint8).tobytes().decode("ascii")
    per_point = groups.reshape(-1, 2).sum(axis=1)
    return text, np.cumsum(per_point)
