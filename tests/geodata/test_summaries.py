"""The first line of a result's text block: one line with the gist, before the JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.geodata.catalogue import summarize
from app.geodata.service import execute


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def summary(tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    result = execute(tool, args).structured
    text = summarize(tool, result)
    assert len(text.splitlines()) == 1, text
    assert len(text) < len(json.dumps(result)), text
    return text, result


def test_population_names_the_figure_and_place() -> None:
    text, _ = summary("get_population", {"postal_code": "10001"})
    assert text == "ZIP 10001 (New York, NY): population 27,004 (ACS 5-year 2018-2022)."
    state, _ = summary("get_population", {"area": "Travis County, Texas"})
    assert state.endswith("(2019).")  # a Census estimate of one year


def test_an_area_read_one_way_of_several_says_so_in_the_first_line() -> None:
    text, _ = summary("get_population", {"area": "AZ"})
    assert text.startswith("Arizona (state): population 7,278,717 (2019).")
    assert text.endswith(" Also read as: Azerbaijan (country) (see candidates).")


def test_income_says_median_and_a_top_code() -> None:
    text, _ = summary("get_average_income", {"postal_code": "94027"})
    assert text == "ZIP 94027: median household income $250,000 or more (2018-2022)."


def test_geocode_gives_the_best_match_with_coordinates_and_counts_the_others() -> None:
    text, result = summary("geocode", {"query": "Paris", "limit": 5})
    assert text.startswith("'Paris': Paris, Île-de-France, FR (48.85341, 2.34880), city")
    assert text.endswith(f"; {len(result['results']) - 1} more.")
    assert len(text) < len(json.dumps(result)) / 3


def test_geocode_points_at_its_warnings() -> None:
    text, result = summary("geocode", {"query": "221B Baker Street, London"})
    assert "reads as a street address" in result["warnings"][0]
    assert text.endswith("(see warnings).")


def test_reverse_geocode_says_the_zip_is_an_estimate_and_how_sure() -> None:
    text, result = summary("reverse_geocode", {"lat": 40.758, "lon": -73.9855})
    assert text.startswith("In New York City, New York, US (")
    assert "the point is in New York County, New York" in text
    # Times Square is in 10036, though 10020's and 10110's centres are nearer
    if result["postalCodeUncertain"]:
        assert "; ZIP uncertain, estimated from ZIP centres, land areas and bounding " in text
        assert "likeliest first: 10036 (centre " in text
    else:
        assert "; ZIP most likely 10036 (centre " in text
    assert "no ZIP areas offline" in text


def test_reverse_geocode_names_the_basis_of_a_claimed_zip() -> None:
    # the upstream Census geocoder's answer: containment, said as such in the text
    answer = {
        "label": "Seattle, Washington, US",
        "distanceKm": 0.9,
        "countryCode": "US",
        "countyFips": "53033",
        "admin1": "Washington",
        "admin2": "King County",
        "postalCode": "98104",
        "postalCodeBasis": "containment",
    }
    text = summarize("reverse_geocode", answer)
    assert ", ZIP 98104 (by containment: the Census ZCTA whose area holds the point)." in text
    address = summarize("reverse_geocode", {**answer, "postalCodeBasis": "address"})
    assert "ZIP 98104 (the nearest address's postcode, not by area)" in address


def test_search_nearby_names_the_nearest_and_how_to_page() -> None:
    args = {"lat": 51.5074, "lon": -0.1278, "category": "airport", "radius_m": 50000, "limit": 5}
    text, result = summary("search_nearby", args)
    assert text.startswith(f"{result['total']} places of category airport within 50.0 km: ")
    assert result["results"][0]["name"] in text
    assert text.endswith(" More: pass nextCursor as cursor.")


def test_static_map_describes_the_image() -> None:
    text, _ = summary("static_map", {"center": {"lat": 48.85, "lon": 2.35}, "zoom": 5})
    assert text == "600x400 PNG map of (48.8500, 2.3500) at zoom 5 with 0 marker(s)."


def test_a_batch_counts_outcomes_and_names_the_first_answer() -> None:
    paris = execute("geocode", {"query": "Paris"}).structured
    body = {
        "results": [
            {"status": 200, "result": paris},
            {"status": 404, "error": {"code": "NOT_FOUND", "message": "No place"}},
        ],
        "credits": 1,
    }
    text = summarize("geocode", body)
    assert text.startswith("2 items: 1 answered (1 credits), 1 NOT_FOUND; first: 'Paris': ")
    assert "Paris, Île-de-France, FR (48.85341, 2.34880)" in text


def _batch_of(tool: str, *arguments: dict[str, str]) -> dict[str, object]:
    answers = [execute(tool, args).structured for args in arguments]
    return {"results": [{"status": 200, "result": a} for a in answers], "credits": len(answers)}


def test_a_population_batch_says_the_total_of_the_distinct_areas_found() -> None:
    zips = _batch_of("get_population", {"postal_code": "78701"}, {"postal_code": "78702"})
    twice = _batch_of("get_population", {"postal_code": "78701"}, {"postal_code": "78701"})
    mixed = _batch_of("get_population", {"area": "Texas"}, {"area": "Travis County, Texas"})
    one, two = (item["result"]["population"] for item in zips["results"])  # type: ignore[index]

    assert f"total population {one + two:,} (2 distinct)" in summarize("get_population", zips)
    assert f"total population {one:,} (1 distinct)" in summarize("get_population", twice)
    assert "one area may hold another" in summarize("get_population", mixed)
    assert "different years" not in summarize("get_population", mixed)  # both 2019
    undated = _batch_of("get_population", {"area": "Texas"}, {"area": "Lyon, France"})
    assert "figures of different years or none stated" in summarize("get_population", undated)


def test_an_income_batch_says_the_lowest_and_highest_median() -> None:
    body = _batch_of("get_average_income", {"postal_code": "78701"}, {"postal_code": "10001"})
    low, high = sorted(item["result"]["amount"] for item in body["results"])  # type: ignore[index]

    text = summarize("get_average_income", body)

    assert text == (
        f"2 items: 2 answered (2 credits); median household income from ZIP 10001 ${low:,} "
        f"to ZIP 78701 ${high:,}."
    )
