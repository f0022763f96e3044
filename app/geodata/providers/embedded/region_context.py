"""The region a part of a query names ('TX', 'Texas', 'France', 'FR'): a match must lie in it."""

from __future__ import annotations

from app.geodata.indices.store import KIND_ADMIN1, KIND_COUNTRY
from app.geodata.providers.embedded.data import GeoData
from app.geodata.text import key_hash, normalize

Context = tuple[set[int], set[int]]  # (countries, admin1s) a match may lie in


def named_region(data: GeoData, text: str) -> Context | None:
    """The countries and admin1s a part names, if any."""
    countries: set[int] = set()
    admin1s: set[int] = set()
    for feature, _quality in data.lookup_key(key_hash(normalize(text))):
        kind = int(data.kind[feature])
        if kind == KIND_COUNTRY:
            countries.add(int(data.country[feature]))
        elif kind == KIND_ADMIN1:
            admin1s.add(int(data.admin1[feature]))
    return (countries, admin1s) if countries or admin1s else None


def inside_all(data: GeoData, context: list[Context], feature: int) -> bool:
    """Whether the feature lies in every region of the context."""
    return all(
        int(data.country[feature]) in countries or int(data.admin1[feature]) in admin1s
        for countries, admin1s in context
    )
