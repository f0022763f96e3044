"""search_nearby's opaque page cursor: the position of the next result, base64url."""

from __future__ import annotations

import base64

from app.kit.errors import InvalidArgument, NotFound
from app.kit.validation import ascii_digits

CURSOR_PREFIX = "offset:"
MAX_OFFSET = 10_000


def offset_of(cursor: str | None) -> int:
    """Where the page starts (0 without a cursor); INVALID_ARGUMENT for a forged one."""
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        if not text.startswith(CURSOR_PREFIX):
            raise ValueError(text)
        offset = ascii_digits(text[len(CURSOR_PREFIX) :])
        if offset is None or offset > MAX_OFFSET:
            raise ValueError(text)
        return offset
    except ValueError:
        raise InvalidArgument("cursor: not a nextCursor returned by search_nearby") from None


def cursor_at(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{CURSOR_PREFIX}{offset}".encode()).decode().rstrip("=")


def past_the_last_page(category: str, total: int) -> NotFound:
    """A cursor beyond the results: NOT_FOUND (an empty page is no data, so no credit)."""
    return NotFound(f"No more {category} results: all {total} in range were on earlier pages")
