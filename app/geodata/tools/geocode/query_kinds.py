"""What a geocode query asks for that the shipped gazetteer cannot hold: a street address,
a landmark or a natural feature.

The embedded data names cities and towns, regions, countries, postal codes and airports,
nothing else. A query for something else is answered for what it is (UNSUPPORTED, or its
town with a warning), never with a town that merely shares a word with it as if that
were the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.geodata.text import normalize
from app.geodata.tools.geocode import EMBEDDED_GEOCODE_COVERAGE, UPSTREAM_GEOCODE_COVERAGE

_HOUSE_NUMBER = re.compile(r"^\d+[a-z]?(?:-\d+)?\s+\S")
_STREET_WORDS = frozenset(
    "street st avenue ave road rd boulevard blvd lane ln drive dr way court ct terrace "
    "highway hwy parkway pkwy alley rue via calle strasse str platz weg gasse".split()
)
_LANDMARK_WORDS = frozenset(
    "tower bridge statue museum cathedral church basilica temple mosque synagogue palace "
    "castle stadium arena monument memorial building university college hospital station "
    "zoo square plaza theatre theater opera pyramid pyramids abbey fort".split()
)
_NATURAL_WORDS = frozenset(
    "mount mt mountain mountains lake river sea ocean bay gulf island islands falls "
    "waterfall canyon desert glacier volcano peak forest valley beach cape strait reef".split()
)
_NATURAL_PHRASES = ("national park", "state park")


def beyond_gazetteer(part: str) -> str | None:
    """'a street address', 'a landmark' or 'a natural feature' when the query part reads
    as one, else None."""
    text = normalize(part)
    words = set(text.split())
    if _HOUSE_NUMBER.match(text) or words & _STREET_WORDS:
        return "a street address"
    if words & _LANDMARK_WORDS:
        return "a landmark"
    if words & _NATURAL_WORDS or any(phrase in text for phrase in _NATURAL_PHRASES):
        return "a natural feature"
    return None


def unsupported_message(query: str, what: str) -> str:
    return f"{query!r} reads as {what}: {UPSTREAM_GEOCODE_COVERAGE}; {EMBEDDED_GEOCODE_COVERAGE}."


def partial_warning(part: str, what: str, matched: str | None) -> str:
    """For results that match only part of the query (`matched`), or only a place's
    alternate name (None)."""
    found = (
        f"the results match only {matched!r}"
        if matched
        else "the results are places that carry the name"
    )
    return f"{part!r} reads as {what}: {UPSTREAM_GEOCODE_COVERAGE}; {found}."


def not_found_message(query: str) -> str:
    return (
        f"No city, region, country, postal code or airport matches {query!r} "
        f"({UPSTREAM_GEOCODE_COVERAGE})."
    )


@dataclass
class Dropped:
    """The parts of a query that matched nothing (as written), for the answer's warnings:
    a place that lies elsewhere than the query says must never read as the answer."""

    leading: list[str] = field(default_factory=list)  # before the part that matched
    trailing: list[str] = field(default_factory=list)  # after it, naming no region either
    read_as: list[tuple[str, list[str]]] = field(default_factory=list)  # typos forgiven

    def add(self, part: str, before_match: bool) -> None:
        (self.leading if before_match else self.trailing).append(part)

    def corrected(self, part: str, names: list[str]) -> None:
        self.read_as.append((part, names))

    def notes(self, matched: str | None, warned: str | None) -> list[str]:
        """Warnings, given what the first result matched (None: the whole query, as a
        postal code that the rest confirms) and the part already warned about (a
        landmark or address: partial_warning)."""
        notes = [
            f"{part!r} matched no place name: read as {' or '.join(map(repr, names))}, "
            f"a typo away; check it"
            for part, names in self.read_as
        ]
        leading = [p for p in self.leading if warned is None or normalize(p) != warned]
        if leading:
            notes.append(
                f"{', '.join(leading)!r} matched no place in the embedded data "
                f"({UPSTREAM_GEOCODE_COVERAGE}): "
                + (f"the results match only {matched!r}" if matched else "it was not used")
            )
        notes += [f"{p!r} matched no region or country and was not used" for p in self.trailing]
        return notes
