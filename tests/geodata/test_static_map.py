from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from app.geodata.catalogue import summarize
from app.geodata.rendering.map_image import LAND, OCEAN
from app.geodata.service import execute
from app.geodata.tools.static_map.schemas import NAMED_COLORS, Marker, StaticMapArgs
from app.kit.errors import InvalidArgument


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

    def test_a_fit_to_close_markers_goes_to_the_basemaps_detail(self) -> None:
        markers = [{"lat": 39.7392, "lon": -104.9903}, {"lat": 39.7393, "lon": -104.9904}]
        result = execute("static_map", {"markers": markers}).structured
        # the coast and lakes are GSHHG's full resolution to zoom 12, the highest there is
        assert result["zoom"] == 12

    def test_world_at_zoom_zero_is_wider_than_the_world(self) -> None:
        call = execute("static_map", {"center": {"lat": 0.0, "lon": 0.0}, "zoom": 0})
        assert decode(call.png).size == (600, 400)
        assert call.structured["bbox"]["west"] == -180
        assert call.structured["bbox"]["east"] == 180


class TestWholeWorld:
    """A world narrower than the image is drawn once, the sides blank, and said (issue 52:
    zoom 0 at 600 px drew it side by side, every country two or three times)."""

    @pytest.mark.parametrize(
        "request_args",
        [
            {"center": {"lat": 0.0, "lon": 0.0}, "zoom": 0},
            {"center": {"lat": 40.0, "lon": 100.0}, "zoom": 0, "width": 1280},
            {"center": {"lat": 20.0, "lon": 150.0}, "zoom": 1, "width": 1280, "height": 640},
        ],
        ids=["zoom-0-600", "zoom-0-1280-off-centre", "zoom-1-1280"],
    )
    def test_is_drawn_once_and_said(self, request_args: dict) -> None:
        call = execute("static_map", request_args)
        image = np.asarray(decode(call.png))
        zoom, width = request_args["zoom"], image.shape[1]
        world = 256 * 2**zoom
        left = (width - world) // 2
        strip = 16  # the attribution's, along the bottom
        # beside the world: no land or sea (a name at its edge may run over); the world
        # itself in the middle, with both
        for side in (image[:-strip, : left - 1], image[:-strip, left + world + 1 :]):
            for colour in (LAND, OCEAN):
                assert not (side == colour).all(axis=2).any()
            assert (side == 255).all(axis=2).mean() > 0.95
        middle = image[:-strip, left + 1 : left + world - 1]
        for colour in (LAND, OCEAN):
            assert (middle == colour).all(axis=2).mean() > 0.1
        (warning,) = call.structured["warnings"]
        assert f"At zoom {zoom} the whole world is {world} px wide" in warning
        assert "drawn once" in warning
        assert call.structured["center"]["lon"] == 0.0
        assert "(see warnings)" in summarize("static_map", call.structured)

    def test_a_world_as_wide_as_the_image_is_not_warned_about(self) -> None:
        call = execute("static_map", {"center": {"lat": 0.0, "lon": 0.0}, "zoom": 1, "width": 512})
        assert call.structured["warnings"] == []


class TestFitsPastZoomTen:
    MANHATTAN = {"west": -74.02, "south": 40.70, "east": -73.91, "north": 40.88}

    @pytest.mark.parametrize(
        ("width", "height", "zoom"), [(600, 400, 11), (500, 800, 12), (1280, 1280, 12)]
    )
    def test_a_bbox_of_manhattan_fits_as_close_as_its_size_allows(
        self, width: int, height: int, zoom: int
    ) -> None:
        result = execute(
            "static_map", {"bbox": self.MANHATTAN, "width": width, "height": height}
        ).structured
        assert result["zoom"] == zoom
        bbox = result["bbox"]
        assert bbox["west"] <= -74.02
        assert bbox["east"] >= -73.91
        assert bbox["north"] >= 40.88
        assert bbox["south"] <= 40.70


def lon_at_pixel(x: float, center_lon: float, zoom: int, width: int) -> float:
    """The longitude drawn at column x of a map centred on center_lon (Mercator's x is
    linear in longitude)."""
    return center_lon + (x - width / 2) / (256 * 2**zoom) * 360


class TestMarkersOutsideTheView:
    EUROPE = {"center": {"lat": 50.0, "lon": 20.0}, "zoom": 4}

    def test_only_the_drawn_markers_count_and_a_warning_names_the_others(self) -> None:
        markers = [
            {"lat": 55.75, "lon": 37.62, "label": "Moscow"},
            {"lat": 30.04, "lon": 31.24, "label": "Cairo"},
            {"lat": -33.92, "lon": 18.42, "label": "Cape Town"},
        ]
        call = execute("static_map", {**self.EUROPE, "markers": markers})
        result = call.structured

        assert result["bbox"]["south"] > 31  # Cairo and Cape Town are south of the image
        assert result["markers"] == 1
        [warning] = result["warnings"]
        assert "2 of 3 markers are outside the map's view" in warning
        assert "'Cairo', 'Cape Town'" in warning
        assert "Moscow" not in warning
        assert "leave out center and zoom" in warning
        assert "with 1 marker(s) (see warnings)." in summarize("static_map", result)

    def test_unlabelled_markers_are_named_by_index_and_the_list_is_bounded(self) -> None:
        off = [{"lat": -30.0 - i, "lon": 18.0} for i in range(8)]
        result = execute(
            "static_map", {**self.EUROPE, "markers": [{"lat": 50.0, "lon": 20.0}, *off]}
        ).structured

        assert result["markers"] == 1
        [warning] = result["warnings"]
        assert "8 of 9 markers" in warning
        assert "markers[1] (-30, 18), markers[2] (-31, 18)" in warning
        assert "markers[5] (-34, 18) and 3 more;" in warning
        assert "markers[6]" not in warning

    def test_a_marker_whose_disc_reaches_into_the_image_is_drawn(self) -> None:
        view = {"center": {"lat": 0.0, "lon": 0.0}, "zoom": 4, "width": 600, "height": 400}
        just_past = lon_at_pixel(600 + 3, 0.0, 4, 600)  # a 7 px disc: 4 px of it show
        beyond = lon_at_pixel(600 + 12, 0.0, 4, 600)
        marker = {"lat": 0.0, "lon": just_past, "color": "#00ff00"}
        call = execute("static_map", {**view, "markers": [marker]})
        image = decode(call.png)
        assert call.structured["markers"] == 1
        assert call.structured["warnings"] == []
        assert image.getpixel((599, 200)) == (0, 255, 0)  # the disc's edge

        result = execute("static_map", {**view, "markers": [{"lat": 0.0, "lon": beyond}]})
        assert result.structured["markers"] == 0
        assert "1 of 1 markers" in result.structured["warnings"][0]

    def test_a_fit_draws_every_marker_without_a_warning(self) -> None:
        markers = [{"lat": 55.75, "lon": 37.62}, {"lat": -33.92, "lon": 18.42}]
        result = execute("static_map", {"markers": markers}).structured
        assert (result["markers"], result["warnings"]) == (2, [])

    def test_with_only_a_zoom_given_the_hint_is_to_leave_it_out(self) -> None:
        markers = [{"lat": 55.75, "lon": 37.62}, {"lat": -33.92, "lon": 18.42}]
        result = execute("static_map", {"zoom": 6, "markers": markers}).structured
        assert result["markers"] < 2
        assert (
            "leave out zoom to fit the map to every marker, or lower the zoom"
            in (result["warnings"][0])
        )


class TestPathOutsideTheView:
    def test_a_path_wholly_outside_is_warned_about(self) -> None:
        path = [{"lat": -30.0, "lon": 18.0}, {"lat": -31.0, "lon": 19.0}]
        result = execute(
            "static_map", {"center": {"lat": 50.0, "lon": 20.0}, "zoom": 6, "path": path}
        ).structured
        assert result["warnings"] == [
            "The path is outside the map's view and not drawn; leave out center and zoom to "
            "fit the map to it, or lower the zoom"
        ]

    def test_a_path_crossing_the_view_is_clipped_without_a_warning(self) -> None:
        path = [{"lat": -30.0, "lon": 18.0}, {"lat": 60.0, "lon": 21.0}]
        result = execute(
            "static_map", {"center": {"lat": 50.0, "lon": 20.0}, "zoom": 6, "path": path}
        ).structured
        assert result["warnings"] == []


class TestLabelsTheFontCannotDraw:
    TOKYO = {"center": {"lat": 35.68, "lon": 139.77}, "zoom": 9}

    def map_with_label(self, label: str | None) -> tuple[dict, np.ndarray]:
        marker: dict = {"lat": 35.68, "lon": 139.77}
        if label is not None:
            marker["label"] = label
        call = execute("static_map", {**self.TOKYO, "markers": [marker]})
        return call.structured, np.asarray(decode(call.png))

    def test_cjk_characters_are_left_out_not_drawn_as_boxes_with_a_warning(self) -> None:
        result, image = self.map_with_label("東京駅")
        _, unlabelled = self.map_with_label(None)

        assert np.array_equal(image, unlabelled)  # no empty boxes beside the marker
        assert result["markers"] == 1
        [warning] = result["warnings"]
        assert warning.startswith("Label '東京駅': its characters '東京駅' are not in the map font")
        assert "not drawn" in warning
        assert "Latin-script label" in warning

    def test_the_characters_the_font_has_are_kept(self) -> None:
        result, image = self.map_with_label("Tokyo 東京")
        _, latin = self.map_with_label("Tokyo")

        assert np.array_equal(image, latin)
        assert result["warnings"] == [
            "Label 'Tokyo 東京': its characters '東京' are not in the map font, so drawn as "
            "'Tokyo'; use a Latin-script label, e.g. geocode's English name for the place"
        ]

    @pytest.mark.parametrize("label", ["Москва", "Αθήνα", "Zürich", "Łódź", "São Paulo"])
    def test_cyrillic_greek_and_latin_diacritics_draw_without_a_warning(self, label: str) -> None:
        result, image = self.map_with_label(label)
        _, unlabelled = self.map_with_label(None)

        assert result["warnings"] == []
        assert not np.array_equal(image, unlabelled)

    def test_a_label_on_several_markers_is_warned_about_once(self) -> None:
        marker = {"lat": 35.68, "lon": 139.77, "label": "서울"}
        result = execute("static_map", {**self.TOKYO, "markers": [marker, marker]}).structured
        assert len(result["warnings"]) == 1


def test_the_default_colours_are_the_palettes() -> None:
    """The defaults skipped the validator: Pillow drew 'red' as pure #ff0000."""
    marker = Marker(lat=0, lon=0)
    args = StaticMapArgs(markers=[marker], path=[{"lat": 0, "lon": 0}, {"lat": 1, "lon": 1}])
    assert marker.color == NAMED_COLORS["red"]
    assert args.path_color == NAMED_COLORS["blue"]
