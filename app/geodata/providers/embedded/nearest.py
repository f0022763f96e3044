"""reverse_geocode and search_nearby: KD-trees over unit vectors, distances by haversine,
the country from its border polygon."""

from __future__ import annotations

from collections.abc import Sequence
from math import sqrt

import numpy as np

from app.errors import NotFound
from app.geodata.geometry import haversine_km, haversine_km_many, km_to_chord, unit_vector
from app.geodata.indices.country_grid import NO_COUNTRY, country_at
from app.geodata.indices.nearest_grid import REACH_KM, cell_of
from app.geodata.paging import cursor_at, offset_of
from app.geodata.providers.embedded import attribution
from app.geodata.providers.embedded.data import FastViews, GeoData, PointSet
from app.geodata.schemas import (
    NearbyPlace,
    ReverseGeocodeArgs,
    ReverseGeocodeResult,
    SearchNearbyArgs,
    SearchNearbyResult,
)

# Farther than this from every known place (open ocean, polar ice) there is nothing to name.
MAX_REVERSE_KM = 300.0
# A US ZIP code is named only when its point is this close (ZIP areas are small).
MAX_ZIP_KM = 40.0
# Countries whose addresses use US ZIP codes.
ZIP_COUNTRIES = frozenset({"US", "PR", "VI", "GU", "AS", "MP"})
CATEGORIES = ("city", "airport", "postal_code")
REACH_CHORD = km_to_chord(REACH_KM)
# nearest places searched in dense cells and for one in the point's country
COUNTRY_FALLBACK = 64


def nearest_locality(data: GeoData, lat: float, lon: float) -> tuple[int, float]:
    """The place the point is in: (feature, km from the point to its centre).

    1. The country is the Natural Earth polygon that contains the point (country_grid.py).
    2. Candidates are the places at most REACH_KM farther than the nearest place, in that
       country when any is (a point at sea or on unclaimed land keeps them all).
    3. The winner has the smallest distance relative to its reach (its size, see
       data.reach_chord): a city of 2 M people 4 km away beats a suburb of 60,000 3 km
       away, a village 1 km away beats a city 10 km away.
    Most cells of the grid (nearest_grid.py) list every candidate, and comparing those few
    unit vectors in plain Python beats any numpy or KD-tree call for one point; the other
    cells ask the KD-tree."""
    fast = data.fast
    qx, qy, qz = unit_vector(lat, lon)
    cell = cell_of(lat, lon)
    country = country_at(
        lat, lon, cell, fast.cc_cell, fast.cc_off, fast.cc_edge, fast.cc_edge_country
    )
    if country != NO_COUNTRY and not fast.inhabited[country]:
        country = NO_COUNTRY  # nothing to name there: the nearest places, wherever they are
    start, end = fast.grid_off[cell], fast.grid_off[cell + 1]
    if end > start:
        candidates: Sequence[int] = fast.grid_cand[start:end]
    else:
        # a dense cell: the KD-tree's nearest places stand in for the full list
        _chords, near = data.localities.tree.query((qx, qy, qz), k=COUNTRY_FALLBACK)
        candidates = near.tolist()
    best = _best(fast, candidates, qx, qy, qz, country)
    if best < 0 and country != NO_COUNTRY:
        # no candidate in the point's country: its nearest places there, else any
        if end > start:
            _chords, near = data.localities.tree.query((qx, qy, qz), k=COUNTRY_FALLBACK)
            candidates = near.tolist()
        best = _best(fast, candidates, qx, qy, qz, country)
        if best < 0:
            best = _best(fast, candidates, qx, qy, qz, NO_COUNTRY)
    feature = fast.features[best]
    return feature, haversine_km(lat, lon, fast.lat[feature], fast.lon[feature])


def _best(
    fast: FastViews, candidates: Sequence[int], qx: float, qy: float, qz: float, country: int
) -> int:
    """The candidate (locality position) with the smallest chord / reach among those in
    `country` (any when NO_COUNTRY) at most REACH_KM beyond the nearest of them; -1 if none
    is in the country."""
    xyz, reach, countries = fast.xyz, fast.reach, fast.country
    dots = [xyz[3 * c] * qx + xyz[3 * c + 1] * qy + xyz[3 * c + 2] * qz for c in candidates]
    if country != NO_COUNTRY:
        kept = [(c, d) for c, d in zip(candidates, dots, strict=True) if countries[c] == country]
    else:
        kept = list(zip(candidates, dots, strict=True))
    if not kept:
        return -1
    # chord <= nearest chord + REACH_CHORD, as a bound on the dot product
    limit = sqrt(max(0.0, 2.0 - 2.0 * max(d for _c, d in kept))) + REACH_CHORD
    least_dot = 1.0 - limit * limit / 2.0
    best, best_score = -1, float("inf")
    for candidate, dot in kept:
        if dot < least_dot:
            continue
        score = sqrt(max(0.0, 2.0 - 2.0 * dot)) / reach[candidate]
        if score < best_score:
            best, best_score = candidate, score
    return best


def reverse(data: GeoData, args: ReverseGeocodeArgs) -> ReverseGeocodeResult:
    feature, km = nearest_locality(data, args.lat, args.lon)
    if km > MAX_REVERSE_KM:
        raise NotFound(
            f"No place within {MAX_REVERSE_KM:.0f} km of ({args.lat}, {args.lon}) "
            "(open sea or uninhabited land)"
        )
    country_code = data.country_code(feature)
    postal_code = None
    if country_code in ZIP_COUNTRIES:
        _chord, index = data.postal.tree.query(unit_vector(args.lat, args.lon), k=1)
        zip_feature = int(data.postal.features[index])
        zip_lat, zip_lon = float(data.lat[zip_feature]), float(data.lon[zip_feature])
        if haversine_km(args.lat, args.lon, zip_lat, zip_lon) <= MAX_ZIP_KM:
            postal_code = data.names[zip_feature]
    return ReverseGeocodeResult(
        name=data.names[feature],
        label=data.label(feature),
        kind="city",
        lat=float(data.lat[feature]),
        lon=float(data.lon[feature]),
        country_code=country_code,
        country=data.country_name(feature),
        admin1=data.admin1_name(feature),
        admin2=data.admin2_name(feature),
        postal_code=postal_code,
        distance_km=round(km, 3),
        source=attribution.places(data.meta),
    )


def _point_set(data: GeoData, category: str) -> PointSet:
    sets = {"city": data.localities, "airport": data.airports, "postal_code": data.postal}
    if category not in sets:
        raise NotFound(
            f"category {category!r} needs the upstream provider (OpenStreetMap), which is not "
            f"enabled for search_nearby here; offline categories: {', '.join(CATEGORIES)}"
        )
    return sets[category]


def nearby(data: GeoData, args: SearchNearbyArgs) -> SearchNearbyResult:
    points = _point_set(data, args.category)
    radius_km = args.radius_m / 1000.0
    # a hair of slack on the chord; the exact haversine filter below decides
    hits = points.tree.query_ball_point(
        unit_vector(args.lat, args.lon), r=km_to_chord(radius_km) * (1 + 1e-9) + 1e-12
    )
    features = points.features[np.asarray(hits, dtype=np.intp)]
    metres = haversine_km_many(args.lat, args.lon, data.lat[features], data.lon[features]) * 1000
    inside = metres <= args.radius_m
    features, metres = features[inside], metres[inside]
    total = len(features)
    offset = offset_of(args.cursor)
    if total == 0:
        raise NotFound(f"No {args.category} within {args.radius_m:g} m of ({args.lat}, {args.lon})")
    order = np.lexsort((-data.population[features], metres))[offset : offset + args.limit]
    more = offset + args.limit < total
    results = []
    for i in order:
        feature = int(features[i])
        results.append(
            NearbyPlace(
                name=data.names[feature],
                category=args.category,
                lat=float(data.lat[feature]),
                lon=float(data.lon[feature]),
                distance_m=round(float(metres[i]), 1),
                code=data.codes[feature] or None,
                country_code=data.country_code(feature),
            )
        )
    return SearchNearbyResult(
        category=args.category,
        radius_m=args.radius_m,
        results=results,
        total=total,
        truncated=more,
        next_cursor=cursor_at(offset + args.limit) if more else None,
        source=attribution.places(data.meta),
    )
