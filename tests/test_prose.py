"""Numbers in prose that would drift are checked against the code they describe: how many
tools there are, which tools' answers are cached, each tool's budget in tools/list. Test
counts are not written down at all (`make test-fast` and pytest print them)."""

from __future__ import annotations

import re
from pathlib import Path

from app.geodata.catalogue import TOOL_SPECS
from tests.mcp.test_tool_budget import TOOL_DEFINITION_MAX_CHARS

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SOURCES = [*sorted((ROOT / "app").rglob("*.py")), *sorted((ROOT / "workers").rglob("*.py"))]
NUMBER_WORDS = "one two three four five six seven eight nine ten eleven twelve".split()
TOOL_COUNT = re.compile(rf"\b({'|'.join(NUMBER_WORDS)})\s+tools\b", re.IGNORECASE)


def lines_of(paths: list[Path]) -> list[tuple[str, int, str]]:
    return [
        (str(path.relative_to(ROOT)), number, line)
        for path in paths
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
    ]


def test_every_count_of_the_tools_is_the_catalogues() -> None:
    """`seven tools` where there are seven; a count of some of them says which
    (`six tools, all but get_demographics`)."""
    wrong = [
        f"{path}:{number}: {found.group(0)}"
        for path, number, line in lines_of([*DOCS, *SOURCES])
        for found in TOOL_COUNT.finditer(line)
        if NUMBER_WORDS.index(found.group(1).lower()) + 1 != len(TOOL_SPECS)
        and "all but" not in line
    ]
    assert wrong == [], f"the catalogue has {len(TOOL_SPECS)} tools"


def test_the_http_api_names_the_tools_whose_answers_are_not_cached() -> None:
    text = " ".join((ROOT / "docs" / "HTTP_API.md").read_text(encoding="utf-8").split())
    said = re.search(r"every tool but (\w+) and (\w+) add `Cache-Control", text)
    assert said, "docs/HTTP_API.md no longer says which answers carry Cache-Control"
    assert set(said.groups()) == {name for name, spec in TOOL_SPECS.items() if not spec.cacheable}


def test_the_tool_list_budget_in_prose_is_the_tests() -> None:
    """A paragraph about tools/list quotes the per-tool budget tests/mcp/test_tool_budget.py
    holds, and no other size of the list."""
    wrong = []
    for path in DOCS:
        for paragraph in path.read_text(encoding="utf-8").split("\n\n"):
            if "tools/list" not in paragraph:
                continue
            for figure in re.findall(r"(\d{1,3}(?:,\d{3})+) characters", paragraph):
                if int(figure.replace(",", "")) != TOOL_DEFINITION_MAX_CHARS:
                    wrong.append(f"{path.name}: {figure} characters")
    assert wrong == []


def test_no_count_of_the_tests_is_written_down() -> None:
    counts = re.compile(r"\b\d[\d,]*\s+(?:or so\s+)?tests\b|\babout [\d,]+ tests\b")
    found = [
        f"{path}:{number}: {line.strip()}"
        for path, number, line in lines_of([ROOT / "README.md", ROOT / "docs" / "CONTRIBUTING.md"])
        if counts.search(line)
    ]
    assert found == []
