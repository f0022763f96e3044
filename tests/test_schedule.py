"""tests/support/schedule.py names files by path: a renamed file would silently lose its
place at the front."""

from __future__ import annotations

from pathlib import Path

from tests.support.schedule import LONGEST

ROOT = Path(__file__).resolve().parent.parent


def test_every_file_handed_out_first_exists() -> None:
    assert [path for path in LONGEST if not (ROOT / path).is_file()] == []
    assert len(set(LONGEST)) == len(LONGEST)
