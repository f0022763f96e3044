"""Forgiving a small typo in a place name: "Philadelpia, PA", "Pitsburgh", "Cincinatti".

Only a query part that matched no name at all is read again, so a real place is never
"corrected" into another ("Pittsburg, Kansas" stays Pittsburg; "Marseilles, Illinois"
stays in Illinois). The candidates are the own names within one typo of the part
(spelling_build.py): at most one edit for names under LONG_NAME letters, two for longer
ones (optimal string alignment distance: a letter missing, added, changed, or two
swapped), with the same first letter (a typo rarely hits it, and 'Denton' and 'Benton'
are both real). Only towns of some size are offered, CONTEXT_POPULATION in the region
or country the query names, LONE_POPULATION with none: the names of most hamlets are
missing from the gazetteer (it holds places of 500 people or more), and a hamlet's name
is more often a real name a letter away from another hamlet's than a typo. Names that
differ only in spaces ('Lees Summit', 'Mc Clure') are the same name, whatever the size.
The answer always says what was read and lowers the confidence (geocoder.MISSPELT).

Measured on the USPS city names of every US ZIP code, with their state (29,784 pairs):
see docs/DESIGN.md, "Typos in place names".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.geodata.indices.spelling_build import MAX_LENGTH, MIN_LENGTH, variants
from app.geodata.indices.store import KIND_CITY
from app.geodata.providers.embedded.data import GeoData
from app.geodata.text import key_hash, normalize

LONG_NAME = 8  # from this many characters on, two edits are forgiven
LONE_POPULATION = 15_000
CONTEXT_POPULATION = 5_000
MAX_OFFERED = 10


def edits(a: str, b: str) -> int:
    """Optimal string alignment distance (Damerau-Levenshtein without re-edits)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


def forgiven(name: str) -> int:
    return 2 if len(name) >= LONG_NAME else 1


def corrections(data: GeoData, name: str, within: Callable[[int], bool] | None) -> list[int]:
    """The places whose own name is nearest to `name` (normalised) within the typos
    forgiven, most populous first; `within` tells whether a place lies where the rest of
    the query says (None: nothing narrows them)."""
    if not MIN_LENGTH <= len(name) <= MAX_LENGTH or any(ch.isdigit() for ch in name):
        return []
    found: set[int] = set()
    for variant in variants(name):
        target = np.uint64(key_hash(variant))
        lo = int(np.searchsorted(data.spell_key, target, side="left"))
        hi = int(np.searchsorted(data.spell_key, target, side="right"))
        found.update(int(f) for f in data.spell_feature[lo:hi])
    scored: list[tuple[int, int, int]] = []
    least = LONE_POPULATION if within is None else CONTEXT_POPULATION
    for feature in found:
        own = normalize(data.names[feature])
        distance = edits(name, own)
        if distance == 0 or distance > forgiven(name) or own[0] != name[0]:
            continue
        if within is not None and not within(feature):
            continue
        people = int(data.population[feature])
        spaced = own.replace(" ", "") == name.replace(" ", "")
        if int(data.kind[feature]) == KIND_CITY and people < least and not spaced:
            continue
        scored.append((distance, -people, feature))
    if not scored:
        return []
    nearest = min(distance for distance, _p, _f in scored)
    return [f for distance, _p, f in sorted(scored) if distance == nearest][:MAX_OFFERED]
