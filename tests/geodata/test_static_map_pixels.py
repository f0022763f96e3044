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

from app.geodata.catalogue import parse
from app.geodata.providers.embedded import EmbeddedProvider, attribution
from app.geodata.rendering import png
from app.geodata.service import provider
from app.geodata.tools.static_map.embedded import answer, map_view
from app.geodata.tools.static_map.schemas import StaticMapArgs
from tests.geodata import reference_static_map as reference

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
    capitals = embedded.basemap.capitals
    return reference.Basemap(data.basemap, data.lat[features], data.lon[features], capitals)


def pixels(png: bytes) -> npt.NDArray[np.uint8]:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def reference_png(
    embedded: EmbeddedProvider, basemap: reference.Basemap, args: StaticMapArgs
) -> bytes:
    markers = [reference.MapMarker(m.lat, m.lon, m.color, m.label) for m in args.markers]
    view = map_view(embedded, args)
    return reference.render(
        basemap,
        view,
        markers,
        embedded.place_names,
        attribution.MAP_ATTRIBUTION,
        embedded.countries,
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
    png = answer(embedded, args).png
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
