from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from app.errors import InvalidArgument
from app.geodata.service import execute


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def decode(png: bytes | None) -> Image.Image:
    assert png is not None
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    return Image.open(io.BytesIO(png)).convert("RGB")


def mercator_pixel(result: dict, lat: float, lon: float) -> tuple[int, int]:
    """Web Mercator, written out again here rather than imported from the renderer."""
    scale = 256 * 2 ** result["zoom"]

    def world(la: float, lo: float) -> tuple[float, float]:
        s = math.sin(math.radians(la))
        return (lo + 180) / 360, 0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)

    x, y = world(lat, lon)
    cx, cy = world(result["center"]["lat"], result["center"]["lon"])
    return round((x - cx) * scale + result["width"] / 2), round(
        (y - cy) * scale + result["height"] / 2
    )


class TestStaticMap:
    def test_png_size_content_and_marker_colour(self) -> None:
        args = {
            "center": {"lat": 30.267, "lon": -97.743},
            "zoom": 9,
            "markers": [{"lat": 30.4, "lon": -97.9, "color": "#00ff00", "label": "here"}],
        }
        call = execute("static_map", args)
        image = decode(call.png)
        assert image.size == (600, 400)
        assert (call.structured["width"], call.structured["height"]) == (600, 400)
        colours = np.asarray(image).reshape(-1, 3)
        assert len(np.unique(colours, axis=0)) > 10  # land, water, labels: not blank
        assert image.getpixel(mercator_pixel(call.structured, 30.4, -97.9)) == (0, 255, 0)
        assert call.structured["bytes"] == len(call.png or b"")
        assert "GeoNames" in call.structured["attribution"]

    def test_fits_markers_when_no_zoom(self) -> None:
        markers = [
            {"lat": 48.8566, "lon": 2.3522, "color": "red"},
            {"lat": 51.5074, "lon": -0.1278, "color": "#0000ff"},
        ]
        call = execute("static_map", {"markers": markers, "width": 400, "height": 300})
        result = call.structured
        image = decode(call.png)
        assert image.size == (400, 300)
        for marker, colour in ((markers[0], (215, 38, 61)), (markers[1], (0, 0, 255))):
            x, y = mercator_pixel(result, marker["lat"], marker["lon"])
            assert 0 <= x < 400
            assert 0 <= y < 300
            assert image.getpixel((x, y)) == colour
        assert 4 <= result["zoom"] <= 7

    def test_bbox_across_the_antimeridian(self) -> None:
        bbox = {"west": 170.0, "south": -25.0, "east": -170.0, "north": -10.0}
        result = execute("static_map", {"bbox": bbox}).structured
        box = result["bbox"]
        assert box["west"] > box["east"]  # the view crosses the line too
        assert box["west"] <= 170
        assert box["east"] >= -170
        assert abs(result["center"]["lon"]) > 175

    def test_largest_map_stays_well_under_one_mebibyte(self) -> None:
        markers = [
            {"lat": 30 + i * 0.3, "lon": -100 + i * 0.5, "label": f"m{i}"} for i in range(50)
        ]
        call = execute("static_map", {"markers": markers, "width": 1280, "height": 1280})
        assert decode(call.png).size == (1280, 1280)
        assert len(call.png or b"") < 512 * 1024

    def test_zoom_past_the_basemaps_detail_is_refused_naming_the_maximum(self) -> None:
        with pytest.raises(InvalidArgument, match="zoom: must be at most 12"):
            execute("static_map", {"center": {"lat": 39.74, "lon": -104.99}, "zoom": 16})

    def test_a_fit_to_close_markers_stops_at_the_basemaps_detail(self) -> None:
        markers = [{"lat": 39.7392, "lon": -104.9903}, {"lat": 39.7393, "lon": -104.9904}]
        result = execute("static_map", {"markers": markers}).structured
        # past zoom 10 the 1:10m coastline's segments are longer than 17 px and the fit would
        # show the markers on an empty canvas
        assert result["zoom"] == 10

    def test_world_at_zoom_zero_is_wider_than_the_world(self) -> None:
        call = execute("static_map", {"center": {"lat": 0.0, "lon": 0.0}, "zoom": 0})
        assert decode(call.png).size == (600, 400)
        assert call.structured["bbox"]["west"] == -180
        assert call.structured["bbox"]["east"] == 180
