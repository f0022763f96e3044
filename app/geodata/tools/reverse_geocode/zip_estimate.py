"""Which US ZIP's area most likely holds a point, without ZIP polygons (no package ships
ZCTA shapes): the plain nearest ZCTA centre is often a one-building or PO box ZCTA in a
downtown (the Seattle Central Library's nearest centre is 98164's, 86 m away; the library
is in 98104, whose centre is 694 m away but whose area is 250 times as large).

Three readings of the data, in order:
- the ZCTA's 2010 bounding box (zipsearch): a ZCTA whose box, widened by BOX_MARGIN_KM,
  leaves the point out cannot hold it;
- the distance relative to the ZCTA's size, its radius sqrt(land area / pi): inside a
  compact ZCTA the point is within about one radius of the centre, so a large ZCTA whose
  centre is 700 m away beats a 0.01 km² one 90 m away;
- residents: a ZCTA with no population (ACS) is a building's, a PO box's or a unique
  ZIP's, not an area anyone means by "the ZIP of this point": such a ZIP is ranked after
  every ZIP with residents, and a point close enough to be in one makes the answer
  uncertain.

The answer is uncertain (`postalCodeUncertain`) when the second likeliest is comparably
close (relative distance within COMPARABLE_RELATIVE times the first's), when the first
is farther than FAR_RELATIVE radii (the point may be in a ZCTA of an odd shape), when a
ZIP with no residents may hold the point, or when no box fits. The thresholds were set
on half of the points of bench/known_answers.json's class zip_downtown (2.0 was enough
there; the earlier ZIP cases' Coors Field, 2.24, raised it to 2.5) and checked on the
other half (docs/DATA.md, Accuracy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import cos, isnan, pi, radians, sqrt

import numpy as np

from app.geodata.geometry import haversine_km_many, unit_vector
from app.geodata.providers.embedded.counties import County
from app.geodata.providers.embedded.data import GeoData
from app.geodata.tools.reverse_geocode.schemas import NearestPostalCode

# ZIP centres searched, how many are offered (US: one more, as a downtown's ZIPs are many
# and small: the Ryman Auditorium's 37219 is the fourth likeliest), and how far one may be
ZIP_SEARCHED = 24
ZIP_OFFERED = 3
US_ZIPS_OFFERED = 4
MAX_ZIP_KM = 40.0
# a bounding box is widened by this much before it may leave a point out (2010 boxes,
# 2020 areas: lines moved a little)
BOX_MARGIN_KM = 0.05
KM_PER_DEGREE = 111.2
# the radius of a ZCTA whose land area is unknown or zero (a water ZCTA)
MIN_RADIUS_KM = 0.03
# uncertain when the second likeliest is within this factor of the first's relative
# distance, or when the first is farther than this many radii
COMPARABLE_RELATIVE = 2.5
FAR_RELATIVE = 1.5
# the nearest postal code is uncertain when the second is at most this much farther
COMPARABLE = 1.5
BASIS = "estimate"


@dataclass(frozen=True)
class Reading:
    feature: int
    km: float
    relative: float  # km / the ZCTA's radius
    residents: bool
    in_box: bool


@dataclass
class ZipAnswer:
    candidates: list[NearestPostalCode]
    uncertain: bool | None
    basis: str | None  # `postalCodeBasis`: BASIS, "nearest_centre" (outside the US), None


def comparably_close(kms: Sequence[float]) -> bool:
    """Whether the nearest centre is uncertain: the second at most COMPARABLE times as far."""
    return len(kms) > 1 and kms[1] <= COMPARABLE * kms[0]


def estimate(data: GeoData, lat: float, lon: float, county: County | None) -> ZipAnswer:
    """Up to US_ZIPS_OFFERED ZIPs of the point's state, likeliest to hold it first."""
    readings = _readings(data, lat, lon, county)
    if not readings:
        return ZipAnswer([], None, None)
    fitting = [r for r in readings if r.in_box]
    ranked = sorted(fitting, key=lambda r: (not r.residents, r.relative))
    if not ranked:  # no box fits (water, a ZCTA newer than 2010): the nearest, unsure
        return ZipAnswer([_candidate(data, r) for r in readings[:US_ZIPS_OFFERED]], True, BASIS)
    offered = ranked[:US_ZIPS_OFFERED]
    first = offered[0]
    doubts = [
        not first.residents,
        first.relative > FAR_RELATIVE,
        len(ranked) > 1 and ranked[1].relative <= COMPARABLE_RELATIVE * first.relative,
        # a building's or PO box ZCTA the point may be in
        any(not r.residents and r.relative <= 1.0 for r in ranked),
    ]
    return ZipAnswer([_candidate(data, r) for r in offered], any(doubts), BASIS)


def _readings(data: GeoData, lat: float, lon: float, county: County | None) -> list[Reading]:
    """The ZCTA centres nearest the point, within MAX_ZIP_KM, of the point's state when
    it is known; nearest first."""
    _chords, rows = data.postal.tree.query(unit_vector(lat, lon), k=ZIP_SEARCHED)
    features = data.postal.features[rows]
    kms = haversine_km_many(lat, lon, data.lat[features], data.lon[features])
    zip_rows = data.zip_row_of_feature[features]
    readings = []
    for feature, row, km in zip(features.tolist(), zip_rows.tolist(), kms.tolist(), strict=True):
        if km > MAX_ZIP_KM or row < 0:
            continue
        if county is not None and data.zip_state[row] != county.state_code:
            continue
        land = float(data.zip_land_km2[row])
        radius = sqrt(land / pi) if not isnan(land) else 0.0
        readings.append(
            Reading(
                feature=feature,
                km=km,
                relative=km / max(radius, MIN_RADIUS_KM),
                residents=int(data.zip_population[row]) > 0,
                in_box=_in_box(data.zip_bounds[row], lat, lon),
            )
        )
    return sorted(readings, key=lambda r: r.km)


def _in_box(bounds: np.ndarray, lat: float, lon: float) -> bool:
    west, south, east, north = (float(b) for b in bounds)
    if isnan(west):
        return True  # no box known: it cannot leave the point out
    margin_lat = BOX_MARGIN_KM / KM_PER_DEGREE
    margin_lon = margin_lat / max(cos(radians(lat)), 0.01)
    return (
        south - margin_lat <= lat <= north + margin_lat
        and west - margin_lon <= lon <= east + margin_lon
    )


def _candidate(data: GeoData, reading: Reading) -> NearestPostalCode:
    return NearestPostalCode(
        code=data.names[reading.feature],
        distance_m=round(reading.km * 1000, 1),
        no_residents=not reading.residents,
    )
