"""Shapes beyond circles (issue 54): `within` a bbox or a polygon on get_population,
get_average_income and get_demographics, by the circles' method (each disc's share inside
the shape), and shapes refused by the rule they break."""

from __future__ import annotations

from math import cos, pi, radians, sin
from pathlib import Path
from typing import Any

import pytest

from app.geodata.catalogue import summarize
from app.geodata.service import execute
from app.kit.errors import InvalidArgument

DENVER = (39.7392, -104.9903)
HALF_KM = 5.0  # a 10 km square around downtown Denver


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def square(lat: float, lon: float, half_km: float) -> list[float]:
    dlat, dlon = half_km / 110.57, half_km / (111.32 * cos(radians(lat)))
    return [lon - dlon, lat - dlat, lon + dlon, lat + dlat]


def population(**where: Any) -> dict[str, Any]:
    return execute("get_population", where).structured


class TestShapes:
    def test_a_bbox_holds_more_than_its_inscribed_circle_less_than_its_outer_one(self) -> None:
        lat, lon = DENVER
        box = population(within={"bbox": square(lat, lon, HALF_KM)})
        inner = population(around={"lat": lat, "lon": lon, "radius_m": HALF_KM * 1000})
        outer = population(around={"lat": lat, "lon": lon, "radius_m": HALF_KM * 1414})

        assert (box["level"], box["method"]) == ("shape", "zcta_area_share")
        assert inner["population"] < box["population"] < outer["population"]
        assert any("Typical error in the US" in w for w in box["warnings"])

    def test_a_triangle_holds_about_half_its_square(self) -> None:
        west, south, east, north = square(*DENVER, HALF_KM)
        box = population(within={"bbox": [west, south, east, north]})
        triangle = [[west, south], [east, south], [east, north], [west, south]]  # closed
        half = population(within={"polygon": triangle})

        assert half["level"] == "shape"
        assert half["name"].startswith("polygon of 3 vertices")
        assert 0.3 < half["population"] / box["population"] < 0.7

    def test_outside_the_us_places_inside_count(self) -> None:
        answer = population(within={"bbox": square(35.9, 14.45, 12)})  # most of Malta
        assert answer["method"] == "populated_places"
        assert 250_000 < answer["population"] < 600_000
        text = summarize("get_population", answer)
        assert "NOT counted" in text
        assert "Typical error" in text

    def test_open_ocean_is_zero_with_a_warning(self) -> None:
        answer = population(within={"polygon": [[-40, 30], [-39.5, 30], [-39.5, 30.4]]})
        assert (answer["population"], answer["method"]) == (0, "none")
        assert "open water" in answer["warnings"][0]

    def test_income_and_profile_of_a_shape(self) -> None:
        within = {"bbox": square(*DENVER, HALF_KM)}
        income = execute("get_average_income", {"within": within}).structured
        profile = execute("get_demographics", {"within": within, "topics": ["age"]}).structured

        assert income["measure"] == "household_weighted_mean_of_zip_medians"
        assert 30_000 < income["amount"] < 250_000
        assert profile["level"] == "shape"
        assert profile["measures"][0]["name"] == "weighted_mean_of_zip_median_age"


def _many(n: int) -> list[list[float]]:
    """A ring of n vertices on an ellipse ~17 km across round Denver."""
    return [
        [-105.0 + 0.2 * cos(2 * pi * k / n), 39.7 + 0.15 * sin(2 * pi * k / n)] for k in range(n)
    ]


class TestBadShapes:
    @pytest.mark.parametrize(
        ("within", "rule"),
        [
            ({"polygon": [[0, 0], [0.1, 0.1], [0.1, 0], [0, 0.1]]}, "polygon crosses itself"),
            ({"polygon": [[179.9, 0], [-179.9, 0], [-179.9, 0.1]]}, "crosses the antimeridian"),
            ({"bbox": [179.9, 0, -179.9, 0.1]}, "bbox crosses the antimeridian"),
            ({"polygon": _many(501)}, "polygon has 501 vertices: at most 500"),
            ({"polygon": [[0, 0], [0.1, 0.1], [0.2, 0.2]]}, "polygon is degenerate"),
            ({"polygon": [[0, 0], [0, 0], [0.1, 0.1]]}, "polygon is degenerate"),
            ({"bbox": [0, 0, 0, 0.1]}, "bbox is degenerate"),
            ({"bbox": [-10, 0, 10, 5]}, "at most 100 km"),
            ({"bbox": [0, 0, 0.1, 91]}, "within.bbox.3: must be at most 90"),
            ({"bbox": [0, 0, 0.1]}, "within.bbox"),
            ({"bbox": [0, 0, 0.1, 0.1], "polygon": [[0, 0], [1, 0], [1, 1]]}, "exactly one"),
        ],
    )
    def test_refused_naming_the_rule(self, within: dict[str, Any], rule: str) -> None:
        with pytest.raises(InvalidArgument, match=rule):
            execute("get_population", {"within": within})

    def test_five_hundred_vertices_are_answered(self) -> None:
        assert population(within={"polygon": _many(500)})["population"] > 100_000

    def test_a_shape_and_a_circle_together_are_refused(self) -> None:
        around = {"lat": 40.0, "lon": -74.0, "radius_m": 10}
        with pytest.raises(InvalidArgument, match="within \\(a bbox or polygon\\)"):
            execute("get_population", {"around": around, "within": {"bbox": [0, 0, 0.1, 0.1]}})
