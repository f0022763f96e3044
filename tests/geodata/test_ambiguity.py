"""geocode says when a name is ambiguous: the rule of `ambiguity`, on the real data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.geodata.catalogue import summarize
from app.geodata.geometry import haversine_km
from app.geodata.providers.embedded.ambiguity import COMPETES, FAR_KM, LISTED, MAX_CANDIDATES
from app.geodata.service import execute


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def geocode(query: str, **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = execute("geocode", {"query": query, **extra}).structured
    return result


def places(result: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    return [(c["countryCode"], c["admin1"]) for c in result["candidates"]]


class TestAmbiguousNames:
    @pytest.mark.parametrize(
        ("query", "first_three"),
        [
            ("Springfield", [("US", "Missouri"), ("US", "Massachusetts"), ("US", "Illinois")]),
            ("Portland", [("US", "Oregon"), ("US", "Maine")]),
            ("San Jose", [("US", "California"), ("CR", "San José"), ("PH", "Mimaropa")]),
            ("Victoria", [("AU", "Victoria"), ("HK", "Central and Western"),
                          ("CA", "British Columbia")]),
            ("Washington", [("US", "Washington"), ("US", "District of Columbia"),
                            ("GB", "England")]),
            ("Georgia", [("GE", None), ("US", "Georgia")]),
        ],
    )  # fmt: skip
    def test_well_known_namesakes_are_offered_as_candidates(
        self, query: str, first_three: list[tuple[str, str]]
    ) -> None:
        result = geocode(query)
        assert result["ambiguous"] is True
        assert places(result)[:3] == first_three
        top = result["results"][0]
        first = result["candidates"][0]
        assert (first["name"], first["lat"], first["lon"]) == (top["name"], top["lat"], top["lon"])
        assert set(first) == {
            "name", "label", "kind", "countryCode", "admin1", "lat", "lon", "confidence"
        }  # fmt: skip

    def test_candidates_follow_the_rule(self) -> None:
        result = geocode("Springfield")
        chosen = result["candidates"]
        best = chosen[0]["confidence"]
        assert 2 <= len(chosen) <= MAX_CANDIDATES
        assert chosen[1]["confidence"] >= COMPETES * best
        assert all(c["confidence"] >= LISTED * best for c in chosen)
        assert [c["confidence"] for c in chosen] == sorted(
            (c["confidence"] for c in chosen), reverse=True
        )
        for i, a in enumerate(chosen):
            for b in chosen[i + 1 :]:
                assert haversine_km(a["lat"], a["lon"], b["lat"], b["lon"]) > FAR_KM

    def test_a_place_past_the_limit_still_competes(self) -> None:
        result = geocode("Portland", limit=1)
        assert len(result["results"]) == 1
        assert result["ambiguous"] is True
        assert places(result) == [("US", "Oregon"), ("US", "Maine")]

    def test_a_country_filter_leaves_the_namesakes_inside_it(self) -> None:
        result = geocode("Portland", country="US")
        assert result["ambiguous"] is True
        assert {country for country, _ in places(result)} == {"US"}

    def test_the_summary_names_the_candidates_and_says_to_ask(self) -> None:
        result = geocode("Portland")
        text = summarize("geocode", result)
        assert len(text.splitlines()) == 1  # the summary line; the JSON follows it
        assert ". Ambiguous: it also names Portland, Maine, US (43.6" in text
        assert text.endswith("Ask which one is meant.")

    def test_a_batch_summary_marks_the_ambiguous_answer(self) -> None:
        body = {
            "credits": 2,
            "results": [
                {"status": 200, "result": geocode("Victoria")},
                {"status": 200, "result": geocode("Austin, TX")},
            ],
        }
        text = summarize("geocode", body)  # names the first answer only
        assert text.endswith("(ambiguous: see candidates).")


class TestUnambiguousNames:
    @pytest.mark.parametrize(
        "query",
        [
            "Austin, TX",  # the state leaves one Austin
            "Springfield, IL",
            "Tokyo",  # the city and the prefecture it lies in are one answer
            "New York",  # likewise the city and the state
            "10001",  # a ZIP code is unique
            "Paris",  # Paris, Texas has about 1 % of the people of Paris
            "London",  # London, Ontario about 5 %
            "Kansas City",  # Missouri and Kansas: one metro area, 5 km apart
            "JFK",
            "France",
        ],
    )
    def test_is_not_flagged(self, query: str) -> None:
        result = geocode(query)
        assert (result["ambiguous"], result["candidates"]) == (False, [])
        assert "Ambiguous" not in summarize("geocode", result)
