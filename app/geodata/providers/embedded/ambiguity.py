"""When a geocode query names several well-known places: "Springfield", "Portland",
"San Jose", "Victoria".

The rule, on the confidences the answer carries (rounded, as the agent sees them):

- The query is **ambiguous** when some other place matched the same part of the query
  (`matched`) with a confidence at least COMPETES x the first result's, lies more than
  FAR_KM from it, and is not nested with it (a city and the region or country it lies
  in are one answer, not two: "Tokyo", "New York", "Córdoba").
- Its **candidates** are then the first result and each further place with a confidence
  at least LISTED x the first's that lies more than FAR_KM from, and is not nested with,
  every candidate listed before it; at most MAX_CANDIDATES, best first.

Two places matched alike differ in confidence only by prominence: confidence is
base x (0.6 + 0.4 x population share), so COMPETES 0.64 means "at least a tenth of the
first's population" and LISTED 0.62 "at least a twentieth". Paris, France against Paris,
Texas (1 %) or London against London, Ontario (5 %) is no question worth asking; Portland,
Oregon against Portland, Maine (10 %) is. A ZIP code, or a name given with its state or
country ("Austin, TX"), leaves only one place, so it is never ambiguous.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from app.geodata.geometry import haversine_km

COMPETES = 0.64  # the runner-up's confidence, as a share of the first's, that makes a question
LISTED = 0.62  # the confidence share a further place needs to be offered as a choice
FAR_KM = 100.0  # nearer than this, two places are one metro area, not two answers
MAX_CANDIDATES = 5
SCANNED = 10  # how many of the best matches are considered, whatever the `limit`


class Place(NamedTuple):
    """What the rule reads of a match (cheap: no names or labels are built for it)."""

    confidence: float  # as in the answer: rounded to 3 decimals
    lat: float
    lon: float
    kind: str
    country: int  # index in the country table, -1 for none
    admin1: int  # index in the admin1 table, -1 for none
    matched: str


def _nested(a: Place, b: Place) -> bool:
    """One lies in the other: a city in its admin1 or country, an admin1 in its country."""
    if a.country < 0 or a.country != b.country:
        return False
    kinds = {a.kind, b.kind}
    return "country" in kinds or ("admin1" in kinds and a.admin1 == b.admin1)


def _apart(a: Place, b: Place) -> bool:
    return not _nested(a, b) and haversine_km(a.lat, a.lon, b.lat, b.lon) > FAR_KM


def candidates(places: Sequence[Place]) -> list[int]:
    """Positions in `places` (the best matches sorted by confidence; SCANNED suffice) of the
    places that compete for the query, best first; empty when it is not ambiguous."""
    if len(places) < 2 or places[0].confidence <= 0:
        return []
    first = places[0]
    alike = [i for i in range(1, min(len(places), SCANNED)) if places[i].matched == first.matched]
    if not any(
        places[i].confidence >= COMPETES * first.confidence and _apart(first, places[i])
        for i in alike
    ):
        return []
    chosen = [0]
    for i in alike:
        if len(chosen) == MAX_CANDIDATES or places[i].confidence < LISTED * first.confidence:
            break
        if all(_apart(places[j], places[i]) for j in chosen):
            chosen.append(i)
    return chosen
