"""The JSON Schema patterns of app.kit.validation say what its validators accept."""

from __future__ import annotations

import re

import pytest

from app.kit.validation import PLAIN_TEXT_PATTERN, VISIBLE_TEXT_PATTERN, plain_text

# Every character up to U+2100 (C0, C1, Latin, the bidi marks) and the isolates after it.
CHARACTERS = [chr(code) for code in (*range(0x2100), *range(0x2066, 0x206A), 0xFEFF)]


def accepted(value: str) -> bool:
    try:
        plain_text(value)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("pattern", [PLAIN_TEXT_PATTERN, VISIBLE_TEXT_PATTERN])
def test_the_pattern_admits_what_plain_text_admits(pattern: str) -> None:
    disagreements = [
        char
        for char in CHARACTERS
        if bool(re.fullmatch(pattern, f"a{char}b")) != accepted(f"a{char}b")
    ]

    assert disagreements == []


def test_visible_text_needs_a_character_that_is_not_white_space() -> None:
    assert re.fullmatch(VISIBLE_TEXT_PATTERN, " laptop ")
    assert not re.fullmatch(VISIBLE_TEXT_PATTERN, " \t\u00a0")
    assert not re.fullmatch(VISIBLE_TEXT_PATTERN, "")
