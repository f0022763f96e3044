"""static_map's choropleth on the real indices and packaged tables: classes, fills where
the areas are, hatching where a table has no figure, the legend, and the refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.geodata.rendering.area_fill import HATCH
from app.geodata.service import execute
from app.geodata.tools.static_map.choropleth import PALETTE
from app.kit.errors import InvalidArgument, Unsupported
from tests.geodata.test_static_map import decode, mercator_pixel

US = {"center": {"lat": 38.5, "lon": -96.0}, "zoom": 4, "width": 800, "height": 500}


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def hexed(rgb: tuple[int, ...]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def colour_near(image: Any, xy: tuple[int, int], radius: int = 3) -> set[str]:
    x, y = xy
    patch = np.asarray(image)[y - radius : y + radius + 1, x - radius : x + radius + 1]
    return {hexed(tuple(p)) for p in patch.reshape(-1, 3).tolist()}


class TestStates:
    def test_density_by_state_fills_states_by_quintile_with_a_legend(self) -> None:
        call = execute(
            "static_map", {**US, "choropleth": {"measure": "population_density", "level": "state"}}
        )
        result, image = call.structured, decode(call.png)
        legend = result["choropleth"]
        assert (legend["measure"], legend["level"], legend["year"]) == (
            "population_density",
            "state",
            "2019",
        )
        assert "Population Estimates Program" in legend["source"]
        assert legend["credit"].startswith("Census PEP 2019")
        colours = [c["color"] for c in legend["classes"]]
        assert colours == [hexed(p) for p in PALETTE]
        counts = [c["areas"] for c in legend["classes"]]
        assert sum(counts) >= 48
        assert max(counts) - min(counts) <= 2
        lows = [c["min"] for c in legend["classes"]]
        assert lows == sorted(lows)
        # New Jersey is the densest state, Wyoming nearly the sparsest
        assert hexed(PALETTE[4]) in colour_near(image, mercator_pixel(result, 40.1, -74.6))
        assert hexed(PALETTE[0]) in colour_near(image, mercator_pixel(result, 43.0, -107.5))
        # the legend box, lower left, shows every class's colour
        corner = colour_near(image, (80, 400), radius=70)
        assert {hexed(p) for p in PALETTE} <= corner

    def test_without_a_choropleth_the_map_has_none(self) -> None:
        call = execute("static_map", US)
        assert call.structured.get("choropleth") is None
        assert not {hexed(p) for p in PALETTE[2:]} & colour_near(
            decode(call.png), mercator_pixel(call.structured, 40.1, -74.6)
        )


class TestCounties:
    def test_areas_without_a_figure_are_hatched_and_said(self) -> None:
        # Puerto Rico: its municipios are in the Census outlines, not in the 2019 estimates
        view = {"center": {"lat": 18.2, "lon": -66.4}, "zoom": 8, "width": 600, "height": 300}
        call = execute(
            "static_map", {**view, "choropleth": {"measure": "population", "level": "county"}}
        )
        result = call.structured
        legend = result["choropleth"]
        assert legend["noData"] >= 70
        assert legend["classes"] == []
        assert any("Municipio" in name for name in legend["noDataAreas"])
        [warning] = [w for w in result["warnings"] if "hatched" in w]
        assert "no population figure" in warning
        assert "Census PEP 2019" in warning
        island = colour_near(decode(call.png), mercator_pixel(result, 18.2, -66.5), radius=6)
        assert hexed(HATCH) in island

    def test_counties_of_texas(self) -> None:
        view = {"center": {"lat": 31.0, "lon": -99.5}, "zoom": 6, "width": 600, "height": 400}
        call = execute(
            "static_map", {**view, "choropleth": {"measure": "population", "level": "county"}}
        )
        result = call.structured
        assert len(result["choropleth"]["classes"]) == 5
        # Harris County (Houston) in the top class, Loving County (the least populous) lowest
        image = decode(call.png)
        assert hexed(PALETTE[4]) in colour_near(image, mercator_pixel(result, 29.86, -95.4))
        assert hexed(PALETTE[0]) in colour_near(image, mercator_pixel(result, 31.85, -103.58))


class TestCountries:
    def test_europe_by_population_density(self) -> None:
        view = {"center": {"lat": 52.0, "lon": 12.0}, "zoom": 4, "width": 800, "height": 600}
        call = execute(
            "static_map",
            {**view, "choropleth": {"measure": "population_density", "level": "country"}},
        )
        result = call.structured
        legend = result["choropleth"]
        assert legend["year"] == "2019"
        assert "World Bank" in legend["source"]
        image = decode(call.png)
        # the Netherlands dense, Sweden (inland, away from the names) sparse
        assert hexed(PALETTE[4]) in colour_near(image, mercator_pixel(result, 52.2, 5.6))
        assert hexed(PALETTE[0]) in colour_near(image, mercator_pixel(result, 57.5, 14.5))


class TestZip:
    def test_zip_codes_are_dots_of_their_figure(self) -> None:
        view = {"center": {"lat": 30.3, "lon": -97.75}, "zoom": 10, "width": 600, "height": 400}
        call = execute(
            "static_map",
            {**view, "choropleth": {"measure": "median_household_income", "level": "zip"}},
        )
        legend = call.structured["choropleth"]
        assert legend["unit"] == "dollars"
        assert legend["year"] == "2020-2024"
        assert len(legend["classes"]) == 5
        assert int(legend["areas"].split()[0]) >= 40

    def test_a_demographic_share_by_zip(self) -> None:
        view = {"center": {"lat": 40.75, "lon": -73.95}, "zoom": 11, "width": 400, "height": 300}
        legend = execute(
            "static_map",
            {**view, "choropleth": {"measure": "share_bachelors_or_higher", "level": "zip"}},
        ).structured["choropleth"]
        assert legend["unit"] == "percent"
        assert legend["year"] == "2018-2022"
        assert 0 <= legend["classes"][0]["min"] <= legend["classes"][-1]["max"] <= 100


class TestRefusals:
    @pytest.mark.parametrize(
        ("choropleth", "error", "words"),
        [
            ({"measure": "gdp", "level": "state"}, InvalidArgument, "not a measure"),
            (
                {"measure": "median_household_income", "level": "county"},
                Unsupported,
                "held by ZIP code only",
            ),
            ({"measure": "population", "level": "zip"}, Unsupported, "zoom 8 or more"),
            ({"measure": "population", "level": "city"}, InvalidArgument, "level"),
            ({"measure": "population"}, InvalidArgument, "level"),
        ],
    )
    def test_refused_naming_the_rule(
        self, choropleth: dict[str, str], error: type[Exception], words: str
    ) -> None:
        with pytest.raises(error, match=words):
            execute("static_map", {**US, "choropleth": choropleth})

    def test_a_legend_too_big_for_the_image_is_said(self) -> None:
        small = {"center": {"lat": 38.5, "lon": -96.0}, "zoom": 3, "width": 120, "height": 90}
        result = execute(
            "static_map", {**small, "choropleth": {"measure": "population", "level": "state"}}
        ).structured
        assert any("too small for the choropleth's legend" in w for w in result["warnings"])
        assert result["choropleth"]["classes"]
