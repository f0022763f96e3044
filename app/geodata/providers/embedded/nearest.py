"""reverse_geocode and search_nearby: KD-trees over unit vectors, distances by haversine."""

from __future__ import annotations

import numpy as np

from app.errors import InvalidArgument, NotFound
from app.geodata.geometry import haversine_km, haversine_km_many, km_to_chord, unit_vector
from app.geodata.indices.nearest_grid import cell_of
from app.geodata.providers.embedded import attribution
from app.geodata.providers.embedded.data import GeoData, PointSet
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


def nearest_locality(data: GeoData, lat: float, lon: float) -> tuple[int, float]:
    """The nearest place by great-circle distance: (feature, km). Most cells of the grid
    (see indices/nearest_grid.py) list the few places that can be nearest inside them, and
    comparing those few unit vectors in plain Python beats any numpy or KD-tree call for
    one point; the other cells ask the KD-tree."""
    fast = data.fast
    qx, qy, qz = unit_vector(lat, lon)
    cell = cell_of(lat, lon)
    start, end = fast.grid_off[cell], fast.grid_off[cell + 1]
    if end > start:
        xyz, best, best_dot = fast.xyz, -1, -2.0
        for slot in range(start, end):
            candidate = fast.grid_cand[slot]
            at = 3 * candidate
            dot = xyz[at] * qx + xyz[at + 1] * qy + xyz[at + 2] * qz
            if dot > best_dot:
                best, best_dot = candidate, dot
    else:
        best = int(data.localities.tree.query((qx, qy, qz), k=1)[1])
    feature = fast.features[best]
    return feature, haversine_km(lat, lon, fast.lat[feature], fast.lon[feature])


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
        raise InvalidArgument(
            f"category: {category!r} is not available here; use one of {', '.join(CATEGORIES)}"
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
    order = np.lexsort((-data.population[features], metres))[: args.limit]
    if len(order) == 0:
        raise NotFound(f"No {args.category} within {args.radius_m:g} m of ({args.lat}, {args.lon})")
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
        source=attribution.places(data.meta),
    )
