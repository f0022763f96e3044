"""geocode never answers with a place that matched only part of the query as if it were
the whole answer (issue 52, item 4): the words it could not use are named in `warnings`,
and a small typo in a place name is forgiven, said, and never applied to a real name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.geodata.providers.embedded.spelling import edits
from app.geodata.service import execute


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def geocode(query: str, **extra: Any) -> dict[str, Any]:
    answer: dict[str, Any] = execute("geocode", {"query": query, **extra}).structured
    return answer


class TestWordsThatMatchedNothing:
    @pytest.mark.parametrize(
        ("query", "ignored", "city"),
        [
            ("Space Needle, Seattle", "Space Needle", "Seattle"),
            ("Fenway Park, Boston", "Fenway Park", "Boston"),
            ("Wrigley Field, Chicago", "Wrigley Field", "Chicago"),
            ("Hollywood Sign, Los Angeles", "Hollywood Sign", "Los Angeles"),
        ],
    )
    def test_a_landmark_before_its_city_is_named_as_ignored(
        self, query: str, ignored: str, city: str
    ) -> None:
        answer = geocode(query)
        top = answer["results"][0]
        assert (top["name"], top["matched"]) == (city, city)
        assert top["confidence"] < 0.6  # only part of the query matched
        assert [w for w in answer["warnings"] if w.startswith(f"{ignored!r} matched no place")]
        assert any("upstream geocoder" in w and repr(city) in w for w in answer["warnings"])

    @pytest.mark.parametrize(
        ("query", "ignored"),
        [
            ("Xqzvbnk, Texas", "Xqzvbnk"),
            ("Alba, MI", "Alba"),  # a region's name elsewhere (Romania): no place in Michigan
        ],
    )
    def test_an_unknown_word_before_a_state_is_not_the_state_silently(
        self, query: str, ignored: str
    ) -> None:
        answer = geocode(query)
        assert answer["results"][0]["kind"] == "admin1"
        assert f"{ignored!r} matched no place" in " ".join(answer["warnings"])

    @pytest.mark.parametrize(
        ("query", "unused"),
        [
            ("Austin, Qwertyville", "Qwertyville"),
            ("Paris, London", "London"),  # a town, but no Paris near it
        ],
    )
    def test_an_unknown_part_after_the_place_is_named_as_not_used(
        self, query: str, unused: str
    ) -> None:
        answer = geocode(query)
        assert answer["results"][0]["name"] == query.split(",")[0]
        assert f"{unused!r} matched no region or country and was not used" in answer["warnings"]

    @pytest.mark.parametrize(
        ("query", "country", "admin1"),
        [
            ("Camden, London", "GB", "England"),  # not Camden, New Jersey
            ("Richmond, London", "GB", "England"),  # not Richmond, Virginia
            ("Hollywood, Los Angeles", "US", "California"),  # not Hollywood, Florida
        ],
    )
    def test_a_town_after_the_place_says_which_one(
        self, query: str, country: str, admin1: str
    ) -> None:
        answer = geocode(query)
        top = answer["results"][0]
        assert (top["countryCode"], top["admin1"]) == (country, admin1)
        assert (answer["ambiguous"], answer["warnings"]) == (False, [])

    def test_a_landmark_before_a_confirmed_code_is_named_as_not_used(self) -> None:
        answer = geocode("Space Needle, Seattle, WA 98109")
        assert answer["results"][0]["postalCode"] == "98109"
        assert answer["warnings"][0].startswith("'Space Needle' matched no place")
        assert answer["warnings"][0].endswith("it was not used")

    @pytest.mark.parametrize("query", ["Austin, TX", "Paris, France", "Springfield", "SW1A 1AA"])
    def test_a_query_used_whole_has_no_such_warning(self, query: str) -> None:
        assert not [w for w in geocode(query)["warnings"] if "matched no" in w]


class TestTypos:
    @pytest.mark.parametrize(
        ("query", "name", "admin1"),
        [
            ("Philadelpia, PA", "Philadelphia", "Pennsylvania"),
            ("Philadelpia PA", "Philadelphia", "Pennsylvania"),
            ("Tuscon, AZ", "Tucson", "Arizona"),
            ("Pitsburgh", "Pittsburgh", "Pennsylvania"),
            ("Sacremento", "Sacramento", "California"),
        ],
    )
    def test_a_small_typo_is_forgiven_and_said(self, query: str, name: str, admin1: str) -> None:
        answer = geocode(query)
        top = answer["results"][0]
        assert (top["name"], top["admin1"]) == (name, admin1)
        assert top["confidence"] < 0.9  # below any exact name
        assert any(f"read as {name!r}" in w for w in answer["warnings"])

    @pytest.mark.parametrize(
        ("query", "admin1"),
        [
            ("Milwaukie, Oregon", "Oregon"),
            ("Pittsburg, Kansas", "Kansas"),
            ("Marseilles, Illinois", "Illinois"),
            ("Roma, Texas", "Texas"),
        ],
    )
    def test_a_real_name_is_never_corrected(self, query: str, admin1: str) -> None:
        answer = geocode(query)
        top = answer["results"][0]
        assert (top["name"], top["admin1"]) == (query.split(",")[0], admin1)
        assert not [w for w in answer["warnings"] if "read as" in w]

    def test_a_lone_typo_does_not_turn_into_a_hamlet(self) -> None:
        # no state to narrow it: only towns of some size are offered as the meant place
        answer = geocode("Amsterdm")
        assert answer["results"][0]["countryCode"] == "NL"
        assert all(r["population"] is None or r["population"] >= 15_000 for r in answer["results"])

    @pytest.mark.parametrize(
        ("a", "b", "distance"),
        [("tuscon", "tucson", 1), ("cincinatti", "cincinnati", 2), ("paris", "paris", 0)],
    )
    def test_edits(self, a: str, b: str, distance: int) -> None:
        assert edits(a, b) == distance
