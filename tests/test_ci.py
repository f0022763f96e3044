"""CI checks what docs/CONTRIBUTING.md asks of a change, the quickest failure first:
`.ci/run` runs the lint (ruff check, ruff format --check, mypy), the models against the
migrations and the fast tier before the whole suite against the real services."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ci_commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def make_recipe(target: str) -> list[str]:
    makefile = (ROOT / "Makefile").read_text()
    found = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n?)+)", makefile, re.MULTILINE)
    assert found, f"no `{target}` target in the Makefile"
    return [line.strip() for line in found.group(1).splitlines()]


def test_ci_runs_lint_migrations_and_the_fast_tier_before_the_suite() -> None:
    makes = [line for line in ci_commands() if re.search(r"\bmake\b", line)]
    assert makes == [
        "make lint",
        "REQUIRE_SERVICES=1 make check-migrations",
        "make test-fast",
        "REQUIRE_SERVICES=1 make test",
    ]


def test_ci_stops_at_the_first_failure() -> None:
    assert "set -euo pipefail" in ci_commands()


def test_lint_runs_ruff_the_formatter_check_and_mypy() -> None:
    recipe = make_recipe("lint")
    assert any(re.search(r"ruff check \.$", line) for line in recipe), recipe
    assert any(re.search(r"ruff format --check \.$", line) for line in recipe), recipe
    assert any(re.search(r"mypy app workers beat_schedule\.py$", line) for line in recipe), recipe


def test_the_migrations_check_runs_the_models_against_the_migrations() -> None:
    assert any("tests/test_migrations.py" in line for line in make_recipe("check-migrations"))
