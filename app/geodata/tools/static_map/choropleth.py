"""A choropleth over a static_map's view: the level's areas in view classed by quantiles
(CLASSES, fewer when the figures repeat), filled from a sequential palette, the areas
without a figure hatched, a legend naming the measure, its source and year; the legend's
content also in the result (`choropleth`) and what is hatched in `warnings`."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.indices.store import ZIP_KINDS
from app.geodata.providers.embedded.data import GeoData
from app.geodata.rendering.area_fill import RGB, AreaFill, Dots, Legend, legend_fits
from app.geodata.rendering.labels import world_copies
from app.geodata.rendering.mercator import lonlat_to_world
from app.geodata.rendering.view import View
from app.geodata.tools.static_map import area_shapes
from app.geodata.tools.static_map.figures import Figures, check, figures
from app.geodata.tools.static_map.schemas import Choropleth
from app.kit.errors import Unsupported

CLASSES = 5
# ColorBrewer YlOrRd, 5 classes (Cynthia Brewer, Apache-2.0): light to dark, none blue
PALETTE: tuple[RGB, ...] = (
    (255, 255, 178),
    (254, 204, 92),
    (253, 141, 60),
    (240, 59, 32),
    (189, 0, 38),
)
# ZIP codes have no outlines in the data: dots at their centres, only where few enough
# show to read (a 600x400 view at zoom 8 holds a few hundred)
ZIP_MIN_ZOOM = 8
NAMED_MAX = 5
_PLURAL = {"country": "countries", "state": "states", "county": "counties", "zip": "ZIP codes"}


@dataclass(frozen=True)
class Shown:
    """The areas in view as the image fills them, for the app's outlines (`outlines`):
    per area its id, name and colour (None: no figure); `index` the areas' places in
    their level's shapes, or None for ZIP codes, drawn as dots at `x`, `y`."""

    ids: list[str]
    names: list[str]
    colors: list[RGB | None]
    index: list[int] | None
    x: npt.NDArray[np.float64] | None = None
    y: npt.NDArray[np.float64] | None = None


@dataclass(frozen=True)
class Layer:
    fill: AreaFill
    summary: dict[str, Any]  # the result's `choropleth`
    warnings: list[str]
    figures: Figures
    shown: Shown


def layer(data: GeoData, view: View, request: Choropleth) -> Layer:
    """The layer for the view, or INVALID_ARGUMENT / UNSUPPORTED naming the rule broken."""
    check(request.measure, request.level)
    if request.level == "zip" and view.zoom < ZIP_MIN_ZOOM:
        raise Unsupported(
            f"choropleth level zip needs a view of zoom {ZIP_MIN_ZOOM} or more (this one is "
            f"zoom {view.zoom}): ZIP codes have no outlines in the data and are drawn as dots "
            "at their centres, too many to read over a wider view; zoom in, or use level "
            "county"
        )
    figs = figures(data, request.level, request.measure)
    if request.level == "zip":
        codes, x, y = _zip_points(data)
        pad = 8 / view.scale
        x0, y0, x1, y1 = view.world_bounds()
        seen = np.nonzero((x >= x0 - pad) & (x <= x1 + pad) & (y >= y0 - pad) & (y <= y1 + pad))[0]
        ids, names = [codes[i] for i in seen.tolist()], [codes[i] for i in seen.tolist()]
        dot_colors, summary = _classed(ids, names, figs)
        dots = Dots(x[seen], y[seen], dot_colors)
        shown = Shown(ids, names, dot_colors, None, x[seen], y[seen])
        return _layer(AreaFill(None, [], dots, None), summary, figs, shown)
    shapes = area_shapes.by_level(request.level)
    rings = shapes.rings(view.zoom)
    in_view = _areas_in_view(rings.bbox, rings.area, view)
    ids, names = [shapes.ids[i] for i in in_view], [shapes.names[i] for i in in_view]
    colors_in_view, summary = _classed(ids, names, figs)
    colors: list[RGB | None] = [None] * len(shapes.ids)
    for area, color in zip(in_view, colors_in_view, strict=True):
        colors[area] = color
    shown = Shown(ids, names, colors_in_view, in_view)
    return _layer(AreaFill(rings, colors, None, None), summary, figs, shown)


def _layer(fill: AreaFill, summary: dict[str, Any], figs: Figures, shown: Shown) -> Layer:
    legend = Legend(
        figs.title,
        [
            (_rgb_of(c["color"]), f"{_fmt(c['min'], figs.unit)} – {_fmt(c['max'], figs.unit)}")
            for c in summary["classes"]
        ]
        + ([(None, f"no data ({summary['noData']})")] if summary["noData"] else []),
        [f"{summary['credit']}", f"quintiles of the {summary['areas']} in view"],
    )
    warnings = []
    if summary["noData"]:
        named = "; ".join(summary["noDataAreas"][:NAMED_MAX])
        more = summary["noData"] - min(NAMED_MAX, len(summary["noDataAreas"]))
        warnings.append(
            f"{summary['noData']} of the {summary['areas']} in view have no "
            f"{figs.measure} figure in {summary['credit']} and are "
            + ("drawn hollow" if figs.level == "zip" else "hatched")
            + f": {named}{f' and {more} more' if more > 0 else ''}"
        )
    return Layer(
        AreaFill(fill.rings, fill.colors, fill.dots, legend), summary, warnings, figs, shown
    )


def warnings(view: View, built: Layer) -> list[str]:
    """What is hatched, and a legend the image is too small for."""
    legend = built.fill.legend
    if legend is None or legend_fits(view, legend):
        return built.warnings
    return [
        *built.warnings,
        f"The image is too small for the choropleth's legend ({view.width}x{view.height} "
        "px): its classes are in the result's `choropleth`; ask for a larger image",
    ]


def _areas_in_view(
    bbox: npt.NDArray[np.float64], ring_area: npt.NDArray[np.int32], view: View
) -> list[int]:
    x0, y0, x1, y1 = view.world_bounds()
    hit = np.zeros(len(bbox), dtype=bool)
    for shift in world_copies(view):
        hit |= (bbox[:, 0] <= x1 - shift) & (bbox[:, 2] >= x0 - shift)
    hit &= (bbox[:, 1] <= y1) & (bbox[:, 3] >= y0)
    return sorted(set(ring_area[hit].tolist()))


def classes(values: npt.NDArray[np.float64], count: int = CLASSES) -> npt.NDArray[np.int64]:
    """Each value's class (0 = lowest) by quantiles: about as many areas in each; equal
    figures in one class, so fewer classes when the figures repeat."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    breaks = np.unique(np.quantile(values, [i / count for i in range(1, count)]))
    raw = np.searchsorted(breaks, values, side="left")
    used = np.unique(raw)  # renumbered without empty classes
    return np.searchsorted(used, raw).astype(np.int64)


def palette(count: int) -> list[RGB]:
    """`count` colours spread over the palette, light to dark."""
    if count <= 1:
        return [PALETTE[len(PALETTE) // 2]] * count
    return [PALETTE[round(i * (len(PALETTE) - 1) / (count - 1))] for i in range(count)]


def _classed(
    ids: list[str], names: list[str], figs: Figures
) -> tuple[list[RGB | None], dict[str, Any]]:
    has = [i for i, area_id in enumerate(ids) if area_id in figs.values]
    values = np.asarray([figs.values[ids[i]] for i in has], dtype=np.float64)
    cls = classes(values)
    count = int(cls.max()) + 1 if len(cls) else 0
    colors_of = palette(count)
    colors: list[RGB | None] = [None] * len(ids)
    for i, c in zip(has, cls.tolist(), strict=True):
        colors[i] = colors_of[c]
    summary_classes = [
        {
            "min": _round(float(values[cls == c].min())),
            "max": _round(float(values[cls == c].max())),
            "color": "#{:02x}{:02x}{:02x}".format(*colors_of[c]),
            "areas": int((cls == c).sum()),
        }
        for c in range(count)
    ]
    missing = sorted({names[i] or "unnamed" for i, color in enumerate(colors) if color is None})
    summary = {
        "measure": figs.measure,
        "level": figs.level,
        "unit": figs.unit,
        "title": figs.title,
        "classes": summary_classes,
        "areas": f"{len(ids)} {_PLURAL[figs.level]}",
        "noData": len(ids) - len(has),
        "noDataAreas": missing[:20],
        "source": figs.source,
        "credit": figs.credit,
        "year": figs.year,
    }
    return colors, summary


def _round(value: float) -> float:
    return float(f"{value:.4g}") if abs(value) < 1e4 else round(value)


def _rgb_of(color: str) -> RGB:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def _fmt(value: float, unit: str) -> str:
    if unit == "percent":
        return f"{value:.1f}%"
    prefix = "$" if unit == "dollars" else ""
    if abs(value) >= 1e6:
        return f"{prefix}{value / 1e6:.1f}M"
    if abs(value) >= 1e4:
        return f"{prefix}{value / 1e3:.0f}K"
    if abs(value) >= 10:
        return f"{prefix}{value:,.0f}"
    return f"{prefix}{value:.1f}" if abs(value) >= 1 or value == 0 else f"{prefix}{value:.2g}"


@functools.lru_cache(maxsize=2)
def _zip_points(
    data: GeoData,
) -> tuple[list[str], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Standard ZIP codes' points: a PO box or unique ZIP (a firm's) has no area and no
    residents of its own, so no dot."""
    standard = np.nonzero(np.asarray(data.zip_kind) == ZIP_KINDS.index("STANDARD") + 1)[0]
    codes = [f"{int(code):05d}" for code in np.asarray(data.zip_code)[standard].tolist()]
    features = np.asarray(data.zip_feature)[standard]
    x, y = lonlat_to_world(np.asarray(data.lon)[features], np.asarray(data.lat)[features])
    return codes, np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
