"""Pages of the request log: keyset (cursor) pagination over the filtered, newest-first log.

A cursor names one entry by its sort key, `<start ms>-<digest>`: the call's start time,
then a digest of the stored entry to order calls that started in the same millisecond.
`before=<cursor>` is the page of entries older than it, `after=<cursor>` the page of
entries newer than it. A cursor stays valid while the log moves: new calls and trimmed
old ones shift offsets, never a comparison, so a page never repeats or skips an entry
that is still in the log (two byte-identical entries count as one position, and are
shown or skipped together).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from app.kit.errors import InvalidArgument

CURSOR_PATTERN = r"^[0-9]{1,15}-[0-9a-f]{12}$"
SortKey = tuple[int, str]


class Entry(Protocol):
    """What a page needs of a log entry (service.CallEntry): its start and its bytes."""

    @property
    def at_ms(self) -> int: ...

    def encode(self) -> str: ...


E = TypeVar("E", bound=Entry)


def sort_key(entry: Entry) -> SortKey:
    digest = hashlib.blake2b(entry.encode().encode(), digest_size=6).hexdigest()
    return entry.at_ms, digest


def cursor_of(key: SortKey) -> str:
    return f"{key[0]}-{key[1]}"


def parse_cursor(cursor: str) -> SortKey:
    at, _, digest = cursor.partition("-")
    return int(at), digest


@dataclass(frozen=True)
class Page(Generic[E]):
    entries: list[E]  # newest first
    offset: int  # entries of the filtered log newer than the page's first
    newer: str | None  # cursor for the previous (newer) page; None on the first
    older: str | None  # cursor for the next (older) page; None on the last


def page_of(
    entries: list[E], *, limit: int, before: str | None = None, after: str | None = None
) -> Page[E]:
    """One page of `entries` (any order; sorted here, newest first)."""
    if before is not None and after is not None:
        raise InvalidArgument("Give `before` or `after`, not both")
    keyed = sorted(((sort_key(entry), entry) for entry in entries), reverse=True)
    # bisect needs ascending keys: negate the time, invert the digest's order
    ascending = [(-at, _inverted(digest)) for (at, digest), _entry in keyed]
    if before is not None:
        at, digest = parse_cursor(before)
        start = bisect_right(ascending, (-at, _inverted(digest)))
        end = start + limit
    elif after is not None:
        at, digest = parse_cursor(after)
        end = bisect_left(ascending, (-at, _inverted(digest)))
        start = max(0, end - limit)
        if start == 0:
            end = limit  # a short first page would hide calls: fill it
    else:
        start, end = 0, limit
    shown = keyed[start:end]
    newer = cursor_of(shown[0][0]) if shown else before  # past the end: back from there
    return Page(
        entries=[entry for _key, entry in shown],
        offset=start,
        newer=newer if start > 0 else None,
        older=cursor_of(shown[-1][0]) if shown and start + len(shown) < len(keyed) else None,
    )


def _inverted(digest: str) -> str:
    """The digest with its order reversed (hex digit d -> 15 - d), so that ascending order
    of (-time, inverted digest) is descending order of (time, digest)."""
    return digest.translate(_INVERT)


_INVERT = str.maketrans("0123456789abcdef", "fedcba9876543210")
