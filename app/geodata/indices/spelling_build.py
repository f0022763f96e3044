"""The spelling index: the names of places, countries and regions with one letter left out,
so that geocode can forgive a small typo (spelling.py).

A name and a query within one typo of each other (a letter missing, added, changed or two
swapped) share a variant with one letter left out, or one is the other with a letter left
out (symmetric deletion, as in SymSpell): a lookup is a handful of binary searches, with no
string distances computed over the whole gazetteer. Only own names are indexed (alternate
names in other languages would turn typos into foreign places), at least MIN_LENGTH long.

Arrays: `spell_key` (hashes of the normalised variants, sorted) and `spell_feature`.
"""

from __future__ import annotations

import numpy as np

from app.geodata.indices.feature_table import IndexBuilder
from app.geodata.indices.store import KIND_ADMIN1, KIND_CITY, KIND_COUNTRY
from app.geodata.text import key_hash, normalize

MIN_LENGTH = 5  # shorter names are within a typo of too many others
MAX_LENGTH = 40


def variants(name: str) -> set[str]:
    """`name` and every string made by leaving one of its characters out."""
    return {name} | {name[:i] + name[i + 1 :] for i in range(len(name))}


def add_spelling_keys(b: IndexBuilder) -> None:
    f = b.features
    pairs: set[tuple[int, int]] = set()
    by_name: dict[str, list[int]] = {}
    for feature, kind in enumerate(f.kind):
        if kind in (KIND_CITY, KIND_ADMIN1, KIND_COUNTRY):
            name = normalize(f.name[feature])
            if MIN_LENGTH <= len(name) <= MAX_LENGTH:
                by_name.setdefault(name, []).append(feature)
    for name, features in by_name.items():  # names repeat: hash each variant once
        for variant in variants(name):
            key = key_hash(variant)
            pairs.update((key, feature) for feature in features)
    keys = np.fromiter((k for k, _f in pairs), dtype=np.uint64, count=len(pairs))
    owners = np.fromiter((f for _k, f in pairs), dtype=np.int32, count=len(pairs))
    order = np.argsort(keys, kind="stable")
    b.arrays.update(spell_key=keys[order], spell_feature=owners[order])
