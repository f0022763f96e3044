"""Airports (airportsdata): features found by IATA/ICAO code and by name."""

from __future__ import annotations

import numpy as np

from app.geodata.indices import sources
from app.geodata.indices.feature_table import IndexBuilder
from app.geodata.indices.store import KIND_AIRPORT, Q_ALTERNATE, Q_CODE, Q_NAME


def add_airports(b: IndexBuilder) -> None:
    b.progress("airports")
    ids = []
    for airport in sources.airports():
        feature = b.features.add(
            KIND_AIRPORT,
            airport.lat,
            airport.lon,
            airport.name,
            country=b.country_index.get(airport.country, -1),
            code=airport.iata or airport.icao,
        )
        ids.append(feature)
        if airport.iata:
            b.names.add(airport.iata, feature, Q_ALTERNATE)
            for name in airport_names(airport.name, airport.city):
                b.names.add(name, feature, Q_NAME)
        if airport.icao and len(airport.icao) == 4:
            b.names.add(airport.icao, feature, Q_CODE)
    b.arrays["airport_features"] = np.asarray(ids, dtype=np.int32)


def airport_names(name: str, city: str) -> set[str]:
    """'London Heathrow Airport' is also 'Heathrow Airport'; 'Charles de Gaulle
    International Airport' also 'Charles de Gaulle Airport'."""
    names = {name}
    if city and name.startswith(city + " ") and name.endswith(" Airport"):
        names.add(name[len(city) + 1 :])
    names |= {n.replace(" International Airport", " Airport") for n in names}
    return names
