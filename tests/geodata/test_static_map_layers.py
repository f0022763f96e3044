"""What static_map draws, read from its pixels: a path in its colour along its legs and
the short way across the antimeridian; fits that keep every marker and label inside a
margin and stop at the basemap's detail; names that never overlap, country names at low
zooms, capitals marked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from app.geodata.catalogue import parse
from app.geodata.providers.embedded import EmbeddedProvider, attribution
from app.geodata.rendering.map_image import MapMarker, render
from app.geodata.service import execute, provider
from app.geodata.tools.static_map.embedded import map_view
from app.geodata.tools.static_map.schemas import StaticMapArgs
from app.kit.errors import InvalidArgument
from tests.geodata.test_static_map import mercator_pixel
from tests.geodata.test_static_map_pixels import FIXED, pixels


@pytest.fixture(scope="module")
def embedded(geodata_dir: Path) -> EmbeddedProvider:
    return provider()


def draw(request_args: dict[str, Any]) -> tuple[dict[str, Any], npt.NDArray[np.uint8]]:
    call = execute("static_map", request_args)
    assert call.png is not None
    return call.structured, pixels(call.png)


def along(
    result: dict[str, Any], a: tuple[float, float], b: tuple[float, float], steps: int = 20
) -> list[tuple[int, int]]:
    """Pixels on the straight line between two points' pixels (Mercator: a path's legs)."""
    (x0, y0), (x1, y1) = mercator_pixel(result, *a), mercator_pixel(result, *b)
    return [
        (round(x0 + (x1 - x0) * t / steps), round(y0 + (y1 - y0) * t / steps))
        for t in range(1, steps)
    ]


MAGENTA = (255, 0, 255)


class TestPath:
    def test_the_path_is_drawn_in_its_colour_along_its_legs(self, geodata_dir: Path) -> None:
        route = [(48.86, 2.35), (50.85, 4.35), (52.37, 4.90)]  # Paris, Brussels, Amsterdam
        result, image = draw(
            {
                "path": [{"lat": lat, "lon": lon} for lat, lon in route],
                "path_color": "#ff00ff",
                "path_width": 4,
                "center": {"lat": 50.5, "lon": 3.6},
                "zoom": 6,
            }
        )
        for a, b in zip(route, route[1:], strict=False):
            for x, y in along(result, a, b):
                assert tuple(image[y, x]) == MAGENTA, (a, b, x, y)
        off = mercator_pixel(result, 49.5, 6.5)  # Luxembourg: well off the line
        assert tuple(image[off[1], off[0]]) != MAGENTA

    def test_legs_far_beyond_the_image_are_drawn_where_they_cross_it(
        self, geodata_dir: Path
    ) -> None:
        route = [(39.74, -112.0), (39.74, -98.0)]  # across Denver's zoom-12 view
        result, image = draw(
            {
                "path": [{"lat": lat, "lon": lon} for lat, lon in route],
                "path_color": "#ff00ff",
                "path_width": 3,
                "center": {"lat": 39.74, "lon": -104.99},
                "zoom": 12,
            }
        )
        inside = [
            (x, y)
            for x, y in along(result, *route, steps=200_000)
            if 20 <= x < 580 and 20 <= y < 360
        ]
        assert len(inside) > 100
        assert all(tuple(image[y, x]) == MAGENTA for x, y in inside)

    def test_a_path_across_the_antimeridian_goes_the_short_way(self, geodata_dir: Path) -> None:
        route = [(-17.0, 177.0), (-17.5, -178.0)]  # Fiji's Viti Levu to the Lau islands
        result, image = draw(
            {"path": [{"lat": lat, "lon": lon} for lat, lon in route], "path_color": "#ff00ff"}
        )
        assert abs(result["center"]["lon"]) > 175  # fitted to the short line, not the world
        assert result["zoom"] >= 5
        (x0, y0), (x1, y1) = (mercator_pixel(result, *p) for p in route)
        x1 += 256 * 2 ** result["zoom"] * (1 if x1 < x0 else 0)  # the east end, one world on
        for t in range(1, 10):
            x, y = round(x0 + (x1 - x0) * t / 10), round(y0 + (y1 - y0) * t / 10)
            assert tuple(image[y, x]) == MAGENTA, (x, y)

    def test_a_fit_includes_the_path_and_the_markers(self, geodata_dir: Path) -> None:
        route = [(36.17, -115.14), (36.06, -112.14), (37.3, -113.0)]  # Las Vegas, Grand Canyon
        marker = (34.05, -118.24)  # Los Angeles
        result, _image = draw(
            {
                "path": [{"lat": lat, "lon": lon} for lat, lon in route],
                "markers": [{"lat": marker[0], "lon": marker[1]}],
            }
        )
        for point in [*route, marker]:
            x, y = mercator_pixel(result, *point)
            assert MARGIN <= x <= 600 - MARGIN, point
            assert MARGIN <= y <= 400 - MARGIN, point

    @pytest.mark.parametrize(
        ("change", "says"),
        [
            ({"path": [{"lat": 0.0, "lon": 0.0}] * 501}, "at most 500"),
            ({"path": [{"lat": 0.0, "lon": 0.0}]}, "at least 2 points"),
            ({"path_width": 0}, "path_width"),
            ({"path_width": 13}, "path_width"),
            ({"path_color": "#12345"}, "path_color"),
            ({"path_color": "chartreuse"}, "path_color"),
            ({"path": [{"lat": 91.0, "lon": 0.0}, {"lat": 0.0, "lon": 0.0}]}, "lat"),
        ],
    )
    def test_limits(self, change: dict[str, Any], says: str) -> None:
        args = {"path": [{"lat": 0.0, "lon": 0.0}, {"lat": 1.0, "lon": 1.0}], **change}
        with pytest.raises(InvalidArgument, match=says):
            execute("static_map", args)


MARGIN = 10  # the least room a fit leaves between the edges and a marker, label included
ATTRIBUTION = 14  # the credit line's strip along the bottom


def label_pixels(
    embedded: EmbeddedProvider, request_args: dict[str, Any]
) -> tuple[dict[str, Any], npt.NDArray[np.intp]]:
    """Where the markers and their labels are drawn in the fitted view: the pixels that
    differ from the same view without markers (both without place names, which make room
    for markers)."""
    result = execute("static_map", request_args).structured
    args = parse("static_map", request_args)
    assert isinstance(args, StaticMapArgs)
    view = map_view(embedded, args)
    markers = [MapMarker(m.lat, m.lon, m.color, m.label) for m in args.markers]
    credit = attribution.MAP_ATTRIBUTION
    with_markers = pixels(render(embedded.basemap, view, markers, None, credit))
    without = pixels(render(embedded.basemap, view, [], None, credit))
    ys, xs = np.nonzero(np.any(with_markers != without, axis=2))
    return result, np.stack([xs, ys], axis=1)


class TestFit:
    @pytest.mark.parametrize(
        "args",
        [
            {  # Cape Town's sights, labelled: the fit with markers on the edge
                "markers": [
                    {"lat": -33.9249, "lon": 18.4241, "label": "City Hall"},
                    {"lat": -33.9036, "lon": 18.4206, "label": "V&A Waterfront"},
                    {"lat": -33.9628, "lon": 18.4098, "label": "Table Mountain"},
                ]
            },
            {
                "markers": [
                    {"lat": 48.8566, "lon": 2.3522, "label": "Paris"},
                    {"lat": 51.5074, "lon": -0.1278, "label": "London, the capital"},
                ],
                "width": 400,
                "height": 300,
            },
            {
                "markers": [
                    {"lat": 30 + i * 0.3, "lon": -100 + i * 0.5, "label": f"m{i}"}
                    for i in range(50)
                ],
                "width": 1280,
                "height": 1280,
            },
            {"markers": [{"lat": 64.1, "lon": -21.9, "label": "Reykjavik"}], "width": 200},
        ],
        ids=["Cape Town", "Paris and London", "50 labelled", "one marker"],
    )
    def test_every_marker_and_label_is_at_least_the_margin_inside(
        self, embedded: EmbeddedProvider, args: dict[str, Any]
    ) -> None:
        result, drawn = label_pixels(embedded, args)
        width, height = result["width"], result["height"]
        assert len(drawn) > 0
        assert drawn[:, 0].min() >= MARGIN
        assert drawn[:, 0].max() < width - MARGIN
        assert drawn[:, 1].min() >= MARGIN
        assert drawn[:, 1].max() < height - MARGIN - ATTRIBUTION

    def test_a_bbox_fit_leaves_the_margin(self, geodata_dir: Path) -> None:
        bbox = {"west": 5.9, "south": 45.8, "east": 10.5, "north": 47.8}  # Switzerland
        result, _ = draw({"bbox": bbox})
        for lat, lon in ((45.8, 5.9), (47.8, 10.5)):
            x, y = mercator_pixel(result, lat, lon)
            assert MARGIN <= x <= 600 - MARGIN
            assert MARGIN <= y <= 400 - MARGIN - ATTRIBUTION

    def test_close_markers_stop_at_the_basemaps_detail(self, geodata_dir: Path) -> None:
        markers = [{"lat": -33.9249, "lon": 18.4241}, {"lat": -33.9250, "lon": 18.4242}]
        assert draw({"markers": markers})[0]["zoom"] == 12


def placed_boxes(
    embedded: EmbeddedProvider, request_args: dict[str, Any]
) -> tuple[list[tuple[float, float, float, float]], int]:
    """The boxes of the markers and of the names drawn, and how many markers."""
    args = parse("static_map", request_args)
    assert isinstance(args, StaticMapArgs)
    taken: list[tuple[float, float, float, float]] = []
    markers = [MapMarker(m.lat, m.lon, m.color, m.label) for m in args.markers]
    view = map_view(embedded, args)
    names, credit = embedded.place_names, attribution.MAP_ATTRIBUTION
    render(embedded.basemap, view, markers, names, credit, None, embedded.countries, taken)
    return taken, len(markers)


COUNTRY_LABEL = (110, 85, 110)
DARK = (40, 40, 40)


class TestLabels:
    @pytest.mark.parametrize(
        "request_args",
        [
            {"center": {"lat": 50.0, "lon": 10.0}, "zoom": 4},
            {"center": {"lat": 50.8, "lon": 5.0}, "zoom": 7},
            {"center": {"lat": 20.0, "lon": 0.0}, "zoom": 1, "width": 1280, "height": 800},
            {"center": {"lat": 35.68, "lon": 139.7}, "zoom": 10, "width": 931, "height": 777},
            FIXED["fit to 50 labelled markers, 1280x1280"],
            FIXED["Austin at zoom 9, a labelled marker"],
        ],
        ids=["Europe z4", "Benelux z7", "world z1", "Tokyo z10", "50 markers", "Austin"],
    )
    def test_no_two_names_overlap_nor_a_marker_and_its_label(
        self, embedded: EmbeddedProvider, request_args: dict[str, Any]
    ) -> None:
        boxes, markers = placed_boxes(embedded, request_args)
        names = boxes[markers:]
        assert len(names) >= 3
        for i, a in enumerate(names):
            for b in boxes[: markers + i]:  # markers may overlap each other; names may not
                overlap = a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                assert not overlap, (a, b)

    def test_country_names_at_low_zoom_and_not_past_it(self, geodata_dir: Path) -> None:
        result, image = draw({"center": {"lat": 47.0, "lon": 2.0}, "zoom": 5})
        x, y = mercator_pixel(result, 46.0, 2.0)  # GeoNames' point for France
        near = image[y - 10 : y + 10, x - 40 : x + 40]
        assert int(np.all(near == COUNTRY_LABEL, axis=2).sum()) > 10
        _, closer = draw({"center": {"lat": 47.0, "lon": 2.0}, "zoom": 9})
        assert not np.any(np.all(closer == COUNTRY_LABEL, axis=2))

    def test_capitals_are_marked_and_named_before_bigger_towns(self, geodata_dir: Path) -> None:
        # Benelux: Luxembourg City is smaller than Antwerp, Rotterdam and a dozen others
        result, image = draw({"center": {"lat": 50.9, "lon": 5.3}, "zoom": 7, "height": 480})
        for lat, lon in ((50.85, 4.35), (49.61, 6.13), (52.37, 4.89)):  # and Amsterdam
            assert left_of_symbol(result, image, lat, lon) >= 3, (lat, lon)  # a ring's arc
        assert left_of_symbol(result, image, 51.22, 4.40) == 0  # Antwerp: a dot
        x, y = mercator_pixel(result, 51.22, 4.40)
        assert np.all(image[y - 1 : y + 2, x - 1 : x + 2] == DARK)


def left_of_symbol(
    result: dict[str, Any], image: npt.NDArray[np.uint8], lat: float, lon: float
) -> int:
    """Dark pixels 3 to 5 px left of a place's point (a capital's ring; a town's dot is
    2 px wide and its name starts to the right)."""
    x, y = mercator_pixel(result, lat, lon)
    return int(np.all(image[y - 5 : y + 6, x - 5 : x - 2] == DARK, axis=2).sum())
