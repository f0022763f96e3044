"""reverse_geocode in the US: the state and county whose Census polygon holds the point
(counties.py) and a place of that state (never a city across the line); the ZIP codes
are zip_estimate.py's.

nearest_locality ranks places by distance relative to their size, so a big city reaches
across a state line (Jersey City answered "New York City"). Here the candidates are
re-ranked when the winner is of another state: the KD-tree's nearest places, those of
the point's state only, and of those within REACH_KM of the nearest one, the ones in the
point's county first. A winner of the point's own state stands even when its county is
another: cities span counties (New York City's five boroughs, Atlanta's two)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from app.geodata.geometry import EARTH_RADIUS_KM, km_to_chord, unit_vector
from app.geodata.indices.nearest_grid import REACH_KM
from app.geodata.providers.embedded.counties import County, county_key
from app.geodata.providers.embedded.data import GeoData

# nearest places searched for one of the point's state
STATE_CANDIDATES = 128
# A place of the point's state farther than this is "none near" (said in `warnings`).
MAX_IN_STATE_KM = 60.0
REACH_CHORD = km_to_chord(REACH_KM)


@dataclass
class UsPlace:
    feature: int
    km: float
    warnings: list[str] = field(default_factory=list)


def place_in_state(
    data: GeoData, lat: float, lon: float, county: County, feature: int, km: float
) -> UsPlace:
    """The place to name for a US point in `county`: `feature` (nearest_locality's) when
    it is of the same state, else the best of the state, county first."""
    if data.admin1_code(feature) == county.state_code:
        # a city of the same state may span counties (New York City's five): it stays
        return UsPlace(feature, km)
    unit = unit_vector(lat, lon)
    chords, rows = data.localities.tree.query(unit, k=STATE_CANDIDATES)
    features = data.localities.features[rows]
    in_state = data.admin1[features] == data.admin1_by_geonames.get(f"US.{county.state_code}", -1)
    rows, chords, features = rows[in_state], chords[in_state], features[in_state]
    if len(rows) == 0 or _chord_km(float(chords[0])) > MAX_IN_STATE_KM:
        return UsPlace(
            feature,
            km,
            [
                f"No populated place of {county.state} within {MAX_IN_STATE_KM:.0f} km: "
                f"{data.label(feature)} is the nearest, across the state line"
            ],
        )
    eligible = chords <= chords[0] + REACH_CHORD
    rows, chords, features = rows[eligible], chords[eligible], features[eligible]
    wanted = county_key(county.name)
    local = np.asarray([county_key(data.admin2_name(int(f))) == wanted for f in features])
    if local.any():
        rows, chords, features = rows[local], chords[local], features[local]
    best = int(np.argmin(chords**2 * data.inverse_reach_sq[rows]))
    return UsPlace(int(features[best]), _chord_km(float(chords[best])))


def _chord_km(chord: float) -> float:
    return float(2.0 * EARTH_RADIUS_KM * np.arcsin(min(1.0, chord / 2.0)))
