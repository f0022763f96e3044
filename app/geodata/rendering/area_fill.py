"""A choropleth layer: areas filled by class over the land (under the borders, water and
names), areas without a figure hatched, points (ZIP codes, which have no outlines in the
data) as discs; and its legend box in the lower left corner."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageChops, ImageDraw

from app.geodata.rendering.basemap import rings_in_view
from app.geodata.rendering.labels import HALO, LABEL, font, world_copies
from app.geodata.rendering.view import ATTRIBUTION_PX, View

RGB = tuple[int, int, int]
HATCH = (110, 110, 110)
HATCH_STEP = 6  # pixels between the hatch's diagonals
LEGEND_MARGIN = 4
SWATCH = 12


@dataclass(frozen=True)
class Rings:
    """Rings back to back in Web Mercator world units, each with its box and its area."""

    xy: npt.NDArray[np.float64]
    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]
    bbox: npt.NDArray[np.float64]  # (x0, y0, x1, y1) per ring
    area: npt.NDArray[np.int32]  # the area each ring belongs to


@dataclass(frozen=True)
class Dots:
    x: npt.NDArray[np.float64]  # world units
    y: npt.NDArray[np.float64]
    colors: Sequence[RGB | None]  # None: no figure (drawn hollow)


@dataclass(frozen=True)
class Legend:
    title: str
    rows: list[tuple[RGB | None, str]]  # (swatch, text); None: the hatched swatch
    notes: list[str] = field(default_factory=list)  # source and year, what is hatched


@dataclass(frozen=True)
class AreaFill:
    rings: Rings | None
    colors: Sequence[RGB | None]  # per area; None: no figure (hatched)
    dots: Dots | None
    legend: Legend | None

    def fill(self, image: Image.Image, draw: ImageDraw.ImageDraw, view: View) -> None:
        if self.rings is not None:
            _fill_rings(image, draw, view, self.rings, self.colors)
        if self.dots is not None:
            _draw_dots(draw, view, self.dots)

    def draw_legend(self, draw: ImageDraw.ImageDraw, view: View) -> bool:
        """The legend in the lower left corner; False (nothing drawn) when it does not fit."""
        return self.legend is not None and draw_legend(draw, view, self.legend)


def _fill_rings(
    image: Image.Image,
    draw: ImageDraw.ImageDraw,
    view: View,
    rings: Rings,
    colors: Sequence[RGB | None],
) -> None:
    mask: Image.Image | None = None  # where the areas without a figure show
    for shift in world_copies(view):
        for ring, polygon in rings_in_view(
            rings.xy, rings.starts, rings.ends, rings.bbox, view, shift
        ):
            if len(polygon) < 6:
                continue
            color = colors[int(rings.area[ring])]
            if color is None and mask is None:
                mask = Image.new("L", image.size, 0)
            if mask is not None:  # an area drawn over a hatched one takes its place
                ImageDraw.Draw(mask).polygon(polygon, fill=0 if color else 255)
            if color is not None:
                draw.polygon(polygon, fill=color, outline=color)
    if mask is not None:
        image.paste(HATCH, mask=ImageChops.multiply(mask, _hatch(image.size)))


def _hatch(size: tuple[int, int]) -> Image.Image:
    width, height = size
    ys, xs = np.mgrid[0:height, 0:width]
    lines = ((xs + ys) % HATCH_STEP == 0).astype(np.uint8) * 255
    return Image.fromarray(lines, mode="L")


def dot_radius(zoom: int) -> int:
    return max(2, zoom - 6)


def _draw_dots(draw: ImageDraw.ImageDraw, view: View, dots: Dots) -> None:
    r = dot_radius(view.zoom)
    x0, y0, x1, y1 = view.world_bounds()
    pad = r / view.scale
    inside = (dots.x >= x0 - pad) & (dots.x <= x1 + pad) & (dots.y >= y0 - pad)
    inside &= dots.y <= y1 + pad
    for i in np.nonzero(inside)[0].tolist():
        px, py = view.to_pixel(float(dots.x[i]), float(dots.y[i]))
        box = (px - r, py - r, px + r, py + r)
        color = dots.colors[i]
        draw.ellipse(box, fill=color or HALO, outline=HATCH if color is None else LABEL)


def legend_size(draw: ImageDraw.ImageDraw, legend: Legend) -> tuple[int, int]:
    lines = [legend.title, *(text for _c, text in legend.rows), *legend.notes]
    widths = [draw.textlength(legend.title, font=font(11))]
    widths += [SWATCH + 4 + draw.textlength(text, font=font(10)) for _c, text in legend.rows]
    widths += [draw.textlength(note, font=font(9)) for note in legend.notes]
    return int(max(widths)) + 8, 14 * (len(lines) - len(legend.notes)) + 11 * len(legend.notes) + 8


def legend_fits(view: View, legend: Legend) -> bool:
    width, height = legend_size(ImageDraw.Draw(Image.new("RGB", (1, 1))), legend)
    return width <= view.width - 2 * LEGEND_MARGIN and height <= view.height - ATTRIBUTION_PX - 8


def draw_legend(draw: ImageDraw.ImageDraw, view: View, legend: Legend) -> bool:
    if not legend_fits(view, legend):
        return False
    width, height = legend_size(draw, legend)
    left, top = LEGEND_MARGIN, view.height - ATTRIBUTION_PX - LEGEND_MARGIN - height
    draw.rectangle((left, top, left + width, top + height), fill=HALO, outline=(160, 160, 160))
    x, y = left + 4, top + 4
    draw.text((x, y), legend.title, font=font(11), fill=LABEL)
    y += 14
    for color, text in legend.rows:
        swatch = (x, y + 1, x + SWATCH, y + 1 + SWATCH - 2)
        draw.rectangle(swatch, fill=color or HALO, outline=(120, 120, 120))
        if color is None:  # the hatch as the map draws it, inside the swatch's border
            inside = (swatch[2] - swatch[0] - 1, swatch[3] - swatch[1] - 1)
            draw.bitmap((swatch[0] + 1, swatch[1] + 1), _hatch(inside), fill=HATCH)
        draw.text((x + SWATCH + 4, y), text, font=font(10), fill=LABEL)
        y += 14
    for note in legend.notes:
        draw.text((x, y), note, font=font(9), fill=(70, 70, 70))
        y += 11
    return True
