"""The choropleth's classing, fills, hatching and legend on synthetic areas (no indices)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from app.geodata.rendering.area_fill import (
    HATCH,
    AreaFill,
    Legend,
    Rings,
    draw_legend,
    legend_fits,
)
from app.geodata.rendering.mercator import world_pixels
from app.geodata.rendering.view import View
from app.geodata.tools.static_map.choropleth import PALETTE, classes, palette

LAND = (242, 239, 233)


def square_rings(boxes: list[tuple[float, float, float, float]]) -> Rings:
    """Closed squares in world units, clockwise on screen, one area each."""
    rings = [
        np.asarray([(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)], dtype=np.float64)
        for x0, y0, x1, y1 in boxes
    ]
    lengths = np.asarray([len(r) for r in rings], dtype=np.int64)
    ends = np.cumsum(lengths)
    return Rings(
        xy=np.concatenate(rings),
        starts=ends - lengths,
        ends=ends,
        bbox=np.asarray(boxes, dtype=np.float64),
        area=np.arange(len(rings), dtype=np.int32),
    )


class TestClasses:
    def test_quintiles_put_a_fifth_of_the_areas_in_each_class(self) -> None:
        values = np.arange(100, dtype=np.float64)[::-1]
        got = classes(values)
        assert np.bincount(got).tolist() == [20, 20, 20, 20, 20]
        assert got[0] == 4  # 99, the largest, in the top class
        assert got[-1] == 0

    def test_equal_figures_share_a_class_and_empty_classes_go(self) -> None:
        values = np.asarray([1, 1, 1, 1, 1, 1, 1, 2, 3, 3], dtype=np.float64)
        got = classes(values)
        assert len({int(c) for c, v in zip(got, values, strict=True) if v == 1}) == 1
        assert sorted(set(got.tolist())) == [0, 1, 2]  # three figures: three classes

    def test_no_figures_no_classes(self) -> None:
        assert classes(np.zeros(0)).tolist() == []

    def test_palette_spreads_light_to_dark(self) -> None:
        assert palette(5) == list(PALETTE)
        assert palette(2) == [PALETTE[0], PALETTE[-1]]
        assert palette(3) == [PALETTE[0], PALETTE[2], PALETTE[4]]


class TestFill:
    def view(self) -> View:
        # zoom 2: 1024 px for the world; a 200x100 image at the world's centre
        return View(cx=0.5, cy=0.5, zoom=2, width=200, height=100)

    def test_areas_with_a_figure_are_filled_and_those_without_hatched(self) -> None:
        view = self.view()
        side = 40 / world_pixels(view.zoom)  # 40 px squares left and right of the centre
        rings = square_rings(
            [(0.5 - 2 * side, 0.5 - side / 2, 0.5 - side, 0.5 + side / 2),
             (0.5 + side, 0.5 - side / 2, 0.5 + 2 * side, 0.5 + side / 2)]
        )  # fmt: skip
        image = Image.new("RGB", (view.width, view.height), LAND)
        AreaFill(rings, [PALETTE[4], None], None, None).fill(image, ImageDraw.Draw(image), view)
        pixels = np.asarray(image)
        filled = pixels[45:55, 30:50].reshape(-1, 3)
        assert {tuple(p) for p in filled.tolist()} == {PALETTE[4]}
        hatched = {tuple(p) for p in pixels[40:60, 150:170].reshape(-1, 3).tolist()}
        assert hatched == {HATCH, LAND}  # diagonal lines over the land, no fill colour
        assert {tuple(p) for p in pixels[40:60, 90:110].reshape(-1, 3).tolist()} == {LAND}

    def test_an_area_over_a_hatched_one_is_not_hatched(self) -> None:
        view = self.view()
        side = 20 / world_pixels(view.zoom)
        # a big area without a figure, a small one with, inside it (drawn after: larger first)
        rings = square_rings(
            [(0.5 - 2 * side, 0.5 - 2 * side, 0.5 + 2 * side, 0.5 + 2 * side),
             (0.5 - side / 2, 0.5 - side / 2, 0.5 + side / 2, 0.5 + side / 2)]
        )  # fmt: skip
        image = Image.new("RGB", (view.width, view.height), LAND)
        AreaFill(rings, [None, PALETTE[0]], None, None).fill(image, ImageDraw.Draw(image), view)
        inner = np.asarray(image)[47:53, 97:103].reshape(-1, 3)
        assert {tuple(p) for p in inner.tolist()} == {PALETTE[0]}


class TestLegend:
    LEGEND = Legend(
        "Population (people)",
        [(PALETTE[0], "1 – 10"), (PALETTE[4], "11 – 20"), (None, "no data (3)")],
        ["Census PEP 2019", "quintiles of the 12 states in view"],
    )

    def test_drawn_in_the_lower_left_with_its_swatches(self) -> None:
        view = View(cx=0.5, cy=0.5, zoom=3, width=400, height=300)
        image = Image.new("RGB", (view.width, view.height), LAND)
        assert draw_legend(ImageDraw.Draw(image), view, self.LEGEND)
        corner = {tuple(p) for p in np.asarray(image)[150:290, 0:200].reshape(-1, 3).tolist()}
        assert {PALETTE[0], PALETTE[4], HATCH} <= corner
        top_right = {tuple(p) for p in np.asarray(image)[0:100, 300:].reshape(-1, 3).tolist()}
        assert top_right == {LAND}

    def test_a_map_too_small_for_it_gets_none(self) -> None:
        small = View(cx=0.5, cy=0.5, zoom=3, width=120, height=80)
        assert not legend_fits(small, self.LEGEND)
        image = Image.new("RGB", (small.width, small.height), LAND)
        assert not draw_legend(ImageDraw.Draw(image), small, self.LEGEND)
        assert {tuple(p) for p in np.asarray(image).reshape(-1, 3).tolist()} == {LAND}
