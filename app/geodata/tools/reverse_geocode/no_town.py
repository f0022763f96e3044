"""reverse_geocode's answers for a point in no town: at sea, on a lake or the sea within a
country's waters, or on land farther than MAX_REVERSE_KM from every place (Antarctica):
the place named is only the nearest (`nearestOnly`), never one the point is "in"."""

from __future__ import annotations

from typing import Any

from app.geodata.geometry import chord_to_km, unit_vector
from app.geodata.indices.country_grid import NO_COUNTRY, country_at
from app.geodata.indices.store import KIND_AIRPORT
from app.geodata.indices.water_grid import cell_of
from app.geodata.providers.embedded import attribution
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.shore import TERRITORIAL_SEA_KM
from app.geodata.providers.embedded.water import SHORE_MARGIN_KM, on_land
from app.geodata.tools.reverse_geocode.schemas import ReverseGeocodeResult
from app.kit.errors import NotFound

# Farther than this from every known place (open ocean, polar ice) there is nothing to name.
MAX_REVERSE_KM = 300.0


def on_water_answer(answer: ReverseGeocodeResult, water: str) -> ReverseGeocodeResult:
    """A point's answer in a country (its admin1, county) when it is on water there: the
    place becomes the nearest, said in the warnings."""
    return answer.model_copy(
        update={
            "on_water": True,
            "water": water,
            "nearest_only": True,
            "warnings": [
                f"The point is on {'a lake' if water == 'lake' else 'the sea'}, "
                f"{SHORE_MARGIN_KM * 1000:.0f} m or more from the shore: it is in no "
                f"town; the nearest place is {answer.label}, {answer.distance_km:.1f} km "
                "away",
                *answer.warnings,
            ],
        }
    )


def place_fields(data: GeoData, feature: int, km: float) -> dict[str, Any]:
    """The fields of every reverse_geocode answer: the place named, how far, the sources."""
    return {
        "name": data.names[feature],
        "label": data.label(feature),
        "kind": "poi" if int(data.kind[feature]) == KIND_AIRPORT else "city",
        "lat": float(data.lat[feature]),
        "lon": float(data.lon[feature]),
        "distance_km": round(km, 3),
        "source": attribution.REVERSE,
        "dataset": attribution.reverse_dataset(data.meta),
    }


def at_sea_answer(
    data: GeoData, feature: int, km: float, water: str | None = None
) -> ReverseGeocodeResult:
    """A point in no country (shore.py): the nearest place, and nothing the point is in.
    `water`: the shoreline's word for it (the Caspian is a lake), else the sea."""
    return ReverseGeocodeResult(
        **place_fields(data, feature, km),
        warnings=[
            f"The point is at sea: no country's land or populated place within "
            f"{TERRITORIAL_SEA_KM:.0f} km (12 nautical miles), so no country, admin1 or "
            f"admin2; the nearest place is {data.label(feature)}, {km:.1f} km away"
        ],
        at_sea=True,
        on_water=True,
        water="lake" if water == "lake" else "sea",
        nearest_only=True,
    )


def remote(data: GeoData, lat: float, lon: float, on_water: str | None) -> ReverseGeocodeResult:
    """A point farther than MAX_REVERSE_KM from every place: on a country's land (by its
    border polygon and the shoreline) its country, with the nearest place or station (an
    airfield: Antarctica's stations have no place of their own in GeoNames) as the
    nearest only; else NOT_FOUND."""
    cell = cell_of(lat, lon)
    fast = data.fast
    country = country_at(
        lat, lon, cell, fast.cc_cell, fast.cc_off, fast.cc_edge, fast.cc_edge_country
    )
    if country == NO_COUNTRY or on_water is not None or not on_land(data, lat, lon):
        raise NotFound(
            f"No place within {MAX_REVERSE_KM:.0f} km of ({lat}, {lon}) "
            "(open sea or land in no country)"
        )
    unit = unit_vector(lat, lon)
    nearest = []
    for points in (data.localities, data.airports):
        chord, row = points.tree.query(unit)
        nearest.append((float(chord_to_km(chord)), int(points.features[row])))
    km, feature = min(nearest)
    row = data.countries[country]
    return ReverseGeocodeResult(
        **place_fields(data, feature, km),
        country_code=row["code"],
        country=row["name"],
        warnings=[
            f"No place within {MAX_REVERSE_KM:.0f} km: the point is on land in "
            f"{row['name']}, in no town; the nearest place is {data.label(feature)}, "
            f"{km:.0f} km away"
        ],
        nearest_only=True,
    )
