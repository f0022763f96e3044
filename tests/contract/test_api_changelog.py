"""Issue 57, item 4: docs/API_CHANGELOG.md keeps in step with the contract. Every
operation, parameter, status and field of /v1's OpenAPI document and every field of the
MCP tools' schemas (tools/list) is compared with the committed baseline
(tests/contract/api_baseline.json); each one added, removed or renamed since must be named
by a changelog entry of the baseline's version or later, and each entry must name a real
change. No server: the documents are built as the api builds them."""

from __future__ import annotations

import re

import pytest

from app.v1.versions import VERSIONS
from tests.support.api_contract import (
    CHANGELOG,
    Entries,
    changelog_entries,
    current_names,
    drift,
    read_baseline,
)


@pytest.fixture(scope="module")
def current() -> set[str]:
    return current_names()


@pytest.fixture(scope="module")
def logged() -> tuple[set[str], Entries]:
    before, baseline = read_baseline()
    return baseline, changelog_entries(CHANGELOG.read_text(), before)


class TestTheChangelogIsInStep:
    def test_every_change_since_the_baseline_is_logged(
        self, current: set[str], logged: tuple[set[str], Entries]
    ) -> None:
        baseline, entries = logged

        assert drift(baseline, current, entries).problems == []

    def test_every_version_has_its_section(self) -> None:
        sections = re.findall(r"^## ([0-9]{4}-[0-9]{2}-[0-9]{2})", CHANGELOG.read_text(), re.M)

        assert sections == [version.name for version in VERSIONS]


class TestAnUnloggedChangeFails:
    """The check itself, on the real names with one change made to them."""

    def test_a_renamed_field_fails_until_logged(
        self, current: set[str], logged: tuple[set[str], Entries]
    ) -> None:
        baseline, entries = logged
        assert "PopulationResult.population" in current
        renamed = current - {"PopulationResult.population"} | {"PopulationResult.people"}

        problems = drift(baseline, renamed, entries).problems
        assert problems == [
            "added without a changelog entry: `PopulationResult.people`",
            "removed or renamed without a changelog entry: `PopulationResult.population`",
        ]
        logged_too = changelog_entries(
            "## Unreleased\n- Renamed `PopulationResult.population` to `PopulationResult.people`",
            "9999-01-01",
        )
        both = Entries(entries.added + logged_too.added, entries.removed + logged_too.removed)
        assert drift(baseline, renamed, both).problems == []

    def test_a_tool_argument_added_without_an_entry_fails(
        self, current: set[str], logged: tuple[set[str], Entries]
    ) -> None:
        baseline, entries = logged
        assert "tool geocode input.query" in current

        problems = drift(baseline, current | {"tool geocode input.language"}, entries).problems

        assert problems == ["added without a changelog entry: `tool geocode input.language`"]

    def test_an_entry_naming_no_change_fails(self, logged: tuple[set[str], Entries]) -> None:
        baseline, entries = logged
        bogus = Entries([*entries.added, "GeocodeResult.nothing"], entries.removed)

        assert (
            "changelog entry names no change since the baseline: `GeocodeResult.nothing`"
            in drift(baseline, baseline, bogus).problems
        )

    def test_entries_of_versions_before_the_baseline_are_history(self) -> None:
        text = "## 2026-12-07\n- Added `A.b`\n## 2026-11-27\n- Removed `C.d`\n"

        entries = changelog_entries(text, "2026-12-07")

        assert entries == Entries(added=["A.b"], removed=[])
