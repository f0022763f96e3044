"""A town named after the place it holds: "Camden, London", "Hollywood, Los Angeles",
"Camden, Philadelphia". Regions and countries narrow a match (geocoder._context); a town
is no region, so the places a query part matched that lie within NEAR_TOWN_KM of a town
of the later part's name (of TOWN_POPULATION people or more: a hamlet called Boston does
not place "Springfield, Boston") are the ones meant, and the others are dropped."""

from __future__ import annotations

from collections.abc import Iterable

from app.geodata.geometry import haversine_km
from app.geodata.indices.store import KIND_CITY, Q_CODE
from app.geodata.providers.embedded.data import GeoData
from app.geodata.text import key_hash

NEAR_TOWN_KM = 40.0  # a district or suburb of a city lies this close to its centre
TOWN_POPULATION = 10_000


def near_towns(data: GeoData, name: str, features: Iterable[int]) -> set[int]:
    """Those of `features` within NEAR_TOWN_KM of a town called `name` (normalised)."""
    towns = [
        (float(data.lat[f]), float(data.lon[f]))
        for f, quality in data.lookup_key(key_hash(name))
        if quality < Q_CODE
        and int(data.kind[f]) == KIND_CITY
        and int(data.population[f]) >= TOWN_POPULATION
    ]
    return {
        f
        for f in features
        if any(
            haversine_km(lat, lon, float(data.lat[f]), float(data.lon[f])) <= NEAR_TOWN_KM
            for lat, lon in towns
        )
    }
