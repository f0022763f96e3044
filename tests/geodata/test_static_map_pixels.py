"""The renderer's caches and shortcuts change no pixel: every map here is drawn by the
renderer and by its pinned predecessor (reference_static_map.py) and compared decoded,
pixel for pixel (the PNG bytes may differ: the encoder is free to compress differently)."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from app.errors import InvalidArgument
from app.geodata.catalogue import parse
from app.geodata.providers.embedded import EmbeddedProvider, attribution
from app.geodata.rendering import png
from app.geodata.schemas import StaticMapArgs
from app.geodata.service import execute, provider
from tests.geodata import reference_static_map as reference
from tests.geodata.test_static_map import mercator_pixel

WORLD = {"center": {"lat": 0.0, "lon": 0.0}, "zoom": 2, "width": 1280, "height": 1280}

FIXED: dict[str, dict[str, Any]] = {
    "world 1280x1280": WORLD,
    "world at zoom 0": {"center": {"lat": 0.0, "lon": 0.0}, "zoom": 0},
    "world at zoom 1, 1280x640": {
        "center": {"lat": 20.0, "lon": 150.0},
        "zoom": 1,
        "width": 1280,
        "height": 640,
    },
    "United States at zoom 3": {"center": {"lat": 39.0, "lon": -98.0}, "zoom": 3},
    "United States at zoom 5": {"center": {"lat": 40.0, "lon": -100.0}, "zoom": 5},
    "Alps at zoom 7": {"center": {"lat": 46.5, "lon": 9.8}, "zoom": 7},
    "Austin at zoom 9, a labelled marker": {
        "center": {"lat": 30.267, "lon": -97.743},
        "zoom": 9,
        "markers": [{"lat": 30.4, "lon": -97.9, "color": "#00ff00", "label": "here"}],
    },
    "Denver at zoom 12": {"center": {"lat": 39.74, "lon": -104.99}, "zoom": 12},
    "Gibraltar at zoom 11, 1280x1280": {
        "center": {"lat": 36.0, "lon": -5.6},
        "zoom": 11,
        "width": 1280,
        "height": 1280,
    },
    "inside Brazil at zoom 10, 1280x1280 (one fill covers the view)": {
        "center": {"lat": -10.0, "lon": -50.0},
        "zoom": 10,
        "width": 1280,
        "height": 1280,
    },
    "Norway's coast at zoom 8, 1280x900": {
        "center": {"lat": 68.5, "lon": 15.0},
        "zoom": 8,
        "width": 1280,
        "height": 900,
    },
    "Lake of the Woods at zoom 12 (border, enclave)": {
        "center": {"lat": 49.35, "lon": -95.15},
        "zoom": 12,
    },
    "open ocean at zoom 6": {"center": {"lat": -40.0, "lon": -130.0}, "zoom": 6},
    "Arctic at zoom 3 (centre clamped)": {"center": {"lat": 84.0, "lon": 40.0}, "zoom": 3},
    "a narrow 64x1280 map": {
        "center": {"lat": 0.0, "lon": 20.0},
        "zoom": 3,
        "width": 64,
        "height": 1280,
    },
    "centre on the antimeridian at zoom 4": {"center": {"lat": -17.0, "lon": 180.0}, "zoom": 4},
    "bbox across the antimeridian": {
        "bbox": {"west": 170.0, "south": -25.0, "east": -170.0, "north": -10.0}
    },
    "bbox of Europe, 800x600": {
        "bbox": {"west": -10.0, "south": 35.0, "east": 30.0, "north": 60.0},
        "width": 800,
        "height": 600,
    },
    "fit to Paris and London, 400x300": {
        "markers": [
            {"lat": 48.8566, "lon": 2.3522, "color": "red"},
            {"lat": 51.5074, "lon": -0.1278, "color": "#0000ff"},
        ],
        "width": 400,
        "height": 300,
    },
    "fit to 50 labelled markers, 1280x1280": {
        "markers": [
            {"lat": 30 + i * 0.3, "lon": -100 + i * 0.5, "label": f"m{i}"} for i in range(50)
        ],
        "width": 1280,
        "height": 1280,
    },
}


def random_requests(count: int, seed: int) -> dict[str, dict[str, Any]]:
    """Views anywhere, at any zoom and size: centres at arbitrary fractions of a pixel."""
    rng = random.Random(seed)
    cases: dict[str, dict[str, Any]] = {}
    for i in range(count):
        lat, lon = round(rng.uniform(-70, 75), 5), round(rng.uniform(-180, 180), 5)
        args: dict[str, Any] = {
            "center": {"lat": lat, "lon": lon},
            "zoom": rng.randint(0, 12),
            "width": rng.choice([64, 200, 600, 600, 931, 1280]),
            "height": rng.choice([64, 400, 400, 777, 1280]),
        }
        if rng.random() < 0.3:
            args["markers"] = [
                {"lat": lat + rng.uniform(-1, 1), "lon": lon + rng.uniform(-1, 1), "label": "x"}
            ]
        cases[f"random {seed}-{i}: {args}"] = args
    return cases


@pytest.fixture(scope="module")
def embedded(geodata_dir: Path) -> EmbeddedProvider:
    return provider()


@pytest.fixture(scope="module")
def reference_basemap(embedded: EmbeddedProvider) -> reference.Basemap:
    data = embedded.data
    features = data.localities.features
    return reference.Basemap(data.basemap, data.lat[features], data.lon[features])


def pixels(png: bytes) -> npt.NDArray[np.uint8]:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def reference_png(
    embedded: EmbeddedProvider, basemap: reference.Basemap, args: StaticMapArgs
) -> bytes:
    markers = [reference.MapMarker(m.lat, m.lon, m.color, m.label) for m in args.markers]
    view = embedded.map_view(args)
    return reference.render(
        basemap, view, markers, embedded.place_names, attribution.MAP_ATTRIBUTION
    )


@pytest.mark.parametrize(
    "request_args",
    [*FIXED.values(), *random_requests(24, seed=26).values()],
    ids=[*FIXED, *random_requests(24, seed=26)],
)
def test_the_map_is_pixel_for_pixel_what_it_was(
    embedded: EmbeddedProvider,
    reference_basemap: reference.Basemap,
    request_args: dict[str, Any],
) -> None:
    args = parse("static_map", request_args)
    assert isinstance(args, StaticMapArgs)
    png = embedded.static_map(args).png
    assert png is not None
    now, before = pixels(png), pixels(reference_png(embedded, reference_basemap, args))
    assert now.shape == before.shape
    differing = int(np.any(now != before, axis=2).sum())
    assert differing == 0, f"{differing} pixels differ"


class TestPngEncoder:
    def test_noise_of_an_odd_size_decodes_to_the_same_pixels(self) -> None:
        noise = np.random.default_rng(26).integers(0, 256, size=(37, 61, 3), dtype=np.uint8)
        assert np.array_equal(pixels(png.encode_rgb(Image.fromarray(noise, "RGB"))), noise)

    def test_only_rgb_images(self) -> None:
        with pytest.raises(ValueError, match="RGB"):
            png.encode_rgb(Image.new("RGBA", (4, 4)))


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


def label_pixels(args: dict[str, Any]) -> tuple[dict[str, Any], npt.NDArray[np.intp]]:
    """Where the markers and their labels are drawn: the pixels that differ from the same
    view without markers."""
    result, with_markers = draw(args)
    view = {k: v for k, v in args.items() if k != "markers"}
    view |= {"center": result["center"], "zoom": result["zoom"]}
    _, without = draw(view)
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
        self, geodata_dir: Path, args: dict[str, Any]
    ) -> None:
        result, drawn = label_pixels(args)
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
        assert draw({"markers": markers})[0]["zoom"] == 10
