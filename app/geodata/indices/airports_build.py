"""Airports (airportsdata): features found by IATA/ICAO code and by name, each with its
OurAirports class (airport_classes.py), the basis of search_nearby's prominence order."""

from __future__ import annotations

import re

import numpy as np

from app.geodata.indices import sources
from app.geodata.indices.airport_classes import classify, ourairports
from app.geodata.indices.feature_table import IndexBuilder
from app.geodata.indices.store import AIRPORT_TYPES, KIND_AIRPORT, Q_ALTERNATE, Q_CODE, Q_NAME
from app.geodata.text import key_hash, normalize


def add_airports(b: IndexBuilder) -> None:
    b.progress("airports")
    classes = ourairports()
    # names of places: a medium airport's bare name ('Victoria' for Victoria International,
    # in Sidney, BC) must not compete with them; a large airport's may ('Heathrow')
    place_keys = {key for key, _feature in b.names.entries}
    ids, types, scheduled = [], [], []
    for airport in sources.airports():
        known = classify(airport, classes)
        lat, lon = known.moved_to if known and known.moved_to else (airport.lat, airport.lon)
        name = known.name if known and known.name else airport.name
        feature = b.features.add(
            KIND_AIRPORT,
            lat,
            lon,
            name,
            country=b.country_index.get(airport.country, -1),
            code=airport.iata or airport.icao,
        )
        ids.append(feature)
        types.append(
            AIRPORT_TYPES.index(known.type) if known and known.type in AIRPORT_TYPES else 0
        )
        scheduled.append(-1 if known is None else int(known.scheduled))
        if airport.iata:
            b.names.add(airport.iata, feature, Q_ALTERNATE)
            for variant in airport_names(name, airport.city):
                b.names.add(variant, feature, Q_NAME)
            if name != airport.name:  # the name airportsdata gives still finds it
                for variant in airport_names(airport.name, airport.city):
                    b.names.add(variant, feature, Q_ALTERNATE)
            if known and known.type in ("large_airport", "medium_airport"):
                for known_name in {name, known.known_as or name}:
                    for variant in common_names(known_name, airport.city, airport.iata):
                        # a large airport's common names are its own ('Heathrow')
                        if known.type == "large_airport":
                            b.names.add(variant, feature, Q_NAME)
                        elif "Airport" in variant or key_hash(normalize(variant)) not in place_keys:
                            b.names.add(variant, feature, Q_ALTERNATE)
        if airport.icao and len(airport.icao) == 4:
            b.names.add(airport.icao, feature, Q_CODE)
    b.arrays["airport_features"] = np.asarray(ids, dtype=np.int32)
    b.arrays["airport_type"] = np.asarray(types, dtype=np.uint8)
    b.arrays["airport_scheduled"] = np.asarray(scheduled, dtype=np.int8)


def airport_names(name: str, city: str) -> set[str]:
    """'London Heathrow Airport' is also 'Heathrow Airport'; 'Charles de Gaulle
    International Airport' also 'Charles de Gaulle Airport'."""
    names = {name}
    if city and name.startswith(city + " ") and name.endswith(" Airport"):
        names.add(name[len(city) + 1 :])
    names |= {n.replace(" International Airport", " Airport") for n in names}
    return names


_DROPPED = re.compile(r"\b(?:International|Intercontinental|Metropolitan|Regional|Municipal)\b")


def common_names(name: str, city: str, iata: str) -> set[str]:
    """How people name a large or medium airport: 'SFO airport', 'San Jose airport' and
    'San Jose International Airport' (for 'Norman Y. Mineta San Jose International
    Airport': the name from its city on), 'Oakland International Airport' (for
    'Metropolitan Oakland ...'), and the name without 'Airport' and its city ('Heathrow',
    'Charles de Gaulle', "O'Hare"), unless that is the city's own name."""
    names = {f"{iata} Airport"}
    if city:
        names |= {f"{city} Airport", f"{city} International Airport"}
        at = name.find(city)
        if at > 0:
            names.add(name[at:])
    plain = " ".join(_DROPPED.sub(" ", name).split())
    names.add(plain)
    bare = " ".join(plain.replace("Airport", " ").split())
    if city and bare.startswith(city + " "):
        bare = bare[len(city) + 1 :]
    if city and bare.endswith(" " + city):  # 'Hartsfield/Jackson Atlanta'
        names.add(bare[: -len(city) - 1])
    if bare and normalize(bare) != normalize(city):
        names.add(bare)
    return names
