"""Where a map's names go: country names at low zooms, then places, capitals first and
then the most populous; a name is left out where its box would overlap one already placed
(or a marker with its label) or leave the image. Every name has a halo: it reads on land,
water, borders and paths alike.

The renderer and the pinned reference renderer (tests/geodata/reference_static_map.py)
share these rules; each finds the candidate places its own way."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol, cast

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw, ImageFont

from app.geodata.rendering.glyphs import characters
from app.geodata.rendering.mercator import lonlat_to_world, world_pixels
from app.geodata.rendering.view import View

LABEL = (40, 40, 40)
HALO = (255, 255, 255)
COUNTRY_LABEL = (110, 85, 110)
COUNTRY_MAX_ZOOM = 7  # past it a country's name is mostly off its own map
COUNTRY_BUDGET = 24
PLACE_SIZE, COUNTRY_SIZE = 11, 12
EQUATOR_KM = 40075.0
SPRITES = 4096  # names kept rasterised: about 3 KiB each, 12 MiB at most

Box = tuple[float, float, float, float]  # left, top, right, bottom in pixels
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


class Names(Protocol):
    def __getitem__(self, index: int, /) -> str: ...


class Places(Protocol):
    place_x: npt.NDArray[np.float64]
    place_y: npt.NDArray[np.float64]
    capitals: npt.NDArray[np.intp]


@lru_cache(maxsize=8)
def font(size: int) -> Font:
    """DejaVu Sans where installed (Debian's fonts-dejavu-core; the Docker image has it),
    else Pillow's built-in font (printable ASCII and little more): `missing_glyphs` says
    what either lacks."""
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


def missing_glyphs(text: str) -> str:
    """The characters of `text` the map font has no glyph for (each would be drawn as an
    empty box), each once, in order."""
    known = characters(font(PLACE_SIZE))
    return "".join(dict.fromkeys(char for char in text if ord(char) not in known))


def drawable(text: str) -> str:
    """`text` without the characters the map font cannot draw, its spaces closed up."""
    missing = missing_glyphs(text)
    if not missing:
        return text
    return " ".join("".join(char for char in text if char not in missing).split())


class Countries:
    """Country names, label points (world units) and areas, the largest first: a name is
    drawn only where its country is larger on the map than the name."""

    def __init__(
        self,
        names: Sequence[str],
        lat: npt.ArrayLike,
        lon: npt.ArrayLike,
        area_km2: npt.ArrayLike,
    ) -> None:
        area = np.asarray(area_km2, dtype=np.float64)
        order = np.argsort(-area, kind="stable")
        self.names = [names[int(i)] for i in order]
        self.x, self.y = lonlat_to_world(np.asarray(lon)[order], np.asarray(lat)[order])
        # km per world unit at the label's latitude (Mercator stretches by 1 / cos(lat))
        km_per_unit = EQUATOR_KM * np.cos(np.radians(np.asarray(lat, dtype=np.float64)[order]))
        self.area_units = area[order] / np.maximum(km_per_unit, 1.0) ** 2
        boxes = [_extent(name, COUNTRY_SIZE) for name in self.names]
        self.box_area = np.array([(r - left) * (b - t) for left, t, r, b in boxes], dtype=float)
        self._by_zoom: dict[int, npt.NDArray[np.intp]] = {}

    def at_zoom(self, zoom: int) -> npt.NDArray[np.intp]:
        """The countries large enough at `zoom` for their name (twice its box), largest
        first; worked out once per zoom."""
        if zoom not in self._by_zoom:
            large = self.area_units * world_pixels(zoom) ** 2 >= 2 * self.box_area
            self._by_zoom[zoom] = np.nonzero(large)[0]
        return self._by_zoom[zoom]


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def world_copies(view: View) -> range:
    """The world copies (shifts in whole worlds) the view shows: one when the world is
    narrower than the image (View.whole_world)."""
    if view.whole_world:
        return range(0, 1)
    x0, _y0, x1, _y1 = view.world_bounds()
    return range(int(np.floor(x0)), int(np.floor(x1)) + 1)


def place_labels(
    image: Image.Image,
    draw: ImageDraw.ImageDraw,
    view: View,
    places: Places,
    candidates: Sequence[tuple[int, int]],
    names: Names,
    countries: Countries | None,
    taken: list[Box],
) -> None:
    """Draws the names that fit: capitals, then countries (zoom 1 to COUNTRY_MAX_ZOOM),
    then the other `candidates` ((place, world copy), most populous first). Appends each
    drawn name's box to `taken`."""
    budget = max(3, min(30, view.width * view.height // 20000))
    capitals = _capitals_in_view(view, places)
    drawn = 0
    for index, shift in capitals:
        if drawn < budget and _place(image, draw, view, places, (index, shift), names, True, taken):
            drawn += 1
    if countries is not None and 1 <= view.zoom <= COUNTRY_MAX_ZOOM:
        _country_labels(image, view, countries, taken)
    listed = set(capitals)
    for index, shift in candidates:
        if drawn >= budget:
            return
        if (index, shift) in listed:
            continue
        if _place(image, draw, view, places, (index, shift), names, False, taken):
            drawn += 1


def _place(
    image: Image.Image,
    draw: ImageDraw.ImageDraw,
    view: View,
    places: Places,
    place: tuple[int, int],
    names: Names,
    capital: bool,
    taken: list[Box],
) -> bool:
    """Draws a place's symbol and name if the name fits; whether it did."""
    index, shift = place
    name = names[index]
    px, py = view.to_pixel(float(places.place_x[index]) + shift, float(places.place_y[index]))
    x = px + (7 if capital else 5)
    extent = _extent(name, PLACE_SIZE)
    top, right, bottom = extent[1] + py - 6, extent[2] + x, extent[3] + py - 6
    box = (px - (5.0 if capital else 3.0), top - 1.0, right + 1.0, bottom + 1.0)
    if right > view.width - 2 or bottom > view.height - 16 or top < 2 or px < 3:
        return False
    if any(overlaps(box, other) for other in taken):
        return False
    taken.append(box)
    if capital:
        draw.ellipse((px - 4, py - 4, px + 4, py + 4), fill=HALO, outline=LABEL, width=1)
    draw.ellipse((px - 2, py - 2, px + 2, py + 2), fill=LABEL)
    paste_text(image, (x, py - 6), name, PLACE_SIZE, LABEL)
    return True


def _capitals_in_view(view: View, places: Places) -> list[tuple[int, int]]:
    x0, y0, x1, y1 = view.world_bounds()
    found: list[tuple[int, int]] = []
    x, y = places.place_x[places.capitals], places.place_y[places.capitals]
    for shift in world_copies(view):
        inside = (x + shift >= x0) & (x + shift <= x1) & (y >= y0) & (y <= y1)
        found.extend((int(i), shift) for i in places.capitals[inside])
    return sorted(found)


def _country_labels(image: Image.Image, view: View, countries: Countries, taken: list[Box]) -> None:
    x0, y0, x1, y1 = view.world_bounds()
    drawn = 0
    large = countries.at_zoom(view.zoom)
    at_x, at_y = countries.x[large], countries.y[large]
    for shift in world_copies(view):
        inside = (at_x + shift >= x0) & (at_x + shift <= x1) & (at_y >= y0) & (at_y <= y1)
        for i in large[inside].tolist():
            if drawn >= COUNTRY_BUDGET:
                return
            name = countries.names[i]
            left, top, right, bottom = _extent(name, COUNTRY_SIZE)
            px, py = view.to_pixel(float(countries.x[i]) + shift, float(countries.y[i]))
            x, y = px - (left + right) / 2, py - (top + bottom) / 2
            box = (x + left - 2, y + top - 2, x + right + 2, y + bottom + 2)
            if box[0] < 2 or box[1] < 2 or box[2] > view.width - 2 or box[3] > view.height - 16:
                continue
            if any(overlaps(box, other) for other in taken):
                continue
            taken.append(box)
            paste_text(image, (x, y), name, COUNTRY_SIZE, COUNTRY_LABEL)
            drawn += 1


@lru_cache(maxsize=16384)
def _extent(name: str, size: int) -> tuple[int, int, int, int]:
    """A name's box drawn at (0, 0), measured once: the box only moves with the label."""
    draw = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    return cast(tuple[int, int, int, int], draw.textbbox((0, 0), name, font=font(size)))


def paste_text(
    image: Image.Image, xy: tuple[float, float], text: str, size: int, ink: tuple[int, int, int]
) -> None:
    """`text` in `ink` with a 2 px halo at `xy` (rounded to the pixel), as draw.text would
    draw it, from a sprite drawn once per name: rasterising a name costs more than the
    rest of placing it."""
    sprite, (left, top) = _sprite(text, size, ink)
    image.paste(sprite, (round(xy[0]) + left, round(xy[1]) + top), sprite)


@lru_cache(maxsize=SPRITES)
def _sprite(text: str, size: int, ink: tuple[int, int, int]) -> tuple[Image.Image, tuple[int, int]]:
    box = ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox(
        (0, 0), text, font=font(size), stroke_width=2
    )
    left, top, right, bottom = (int(v) for v in box)
    sprite = Image.new("RGBA", (max(1, right - left), max(1, bottom - top)), (*HALO, 0))
    ImageDraw.Draw(sprite).text(
        (-left, -top), text, font=font(size), fill=ink, stroke_width=2, stroke_fill=HALO
    )
    return sprite, (left, top)
