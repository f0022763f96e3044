"""reverse_geocode and search_nearby: KD-trees over unit vectors, distances by haversine,
the country from its border polygon."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from math import asin, cos, radians, sin, sqrt
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.geometry import EARTH_RADIUS_KM, haversine_km_many, km_to_chord, unit_vector
from app.geodata.indices.country_grid import NO_COUNTRY, country_at
from app.geodata.indices.country_lists import KEY_STRIDE
from app.geodata.indices.nearest_grid import CELLS_PER_DEG, COLS, COUNTRY_FALLBACK, REACH_KM, ROWS
from app.geodata.indices.reverse_build import GENERAL, SHORT_LIST, SPLIT
from app.geodata.paging import cursor_at, offset_of, past_the_last_page
from app.geodata.providers.embedded import attribution, postal_codes
from app.geodata.providers.embedded.data import FastViews, GeoData, PointSet
from app.geodata.providers.embedded.prominence import nearby_order
from app.geodata.providers.embedded.regions import place_in_region
from app.geodata.providers.embedded.shore import at_sea
from app.geodata.providers.embedded.water import lacks_the_land, on_land, water_kind
from app.geodata.tools.reverse_geocode.no_town import (
    MAX_REVERSE_KM,
    at_sea_answer,
    on_water_answer,
    place_fields,
    remote,
)
from app.geodata.tools.reverse_geocode.schemas import (
    ZIP_COUNTRIES,
    ReverseGeocodeArgs,
    ReverseGeocodeResult,
)
from app.geodata.tools.reverse_geocode.us_reverse import place_in_state
from app.geodata.tools.reverse_geocode.zip_estimate import (
    MAX_ZIP_KM,
    ZIP_OFFERED,
    ZipAnswer,
    comparably_close,
    estimate,
)
from app.geodata.tools.search_nearby.schemas import (
    NearbyPlace,
    SearchNearbyArgs,
    SearchNearbyResult,
)
from app.kit.errors import NotFound, Unsupported

CATEGORIES = ("city", "airport", "postal_code")
REACH_CHORD = km_to_chord(REACH_KM)
# a sub-cell's list up to this long is compared in plain Python: below it one numpy pass
# (a fancy index, a product, a filter, an argmin: ~8 calls of a few us) costs more
SUB_SHORT_LIST = 48


def nearest_locality(data: GeoData, lat: float, lon: float) -> tuple[int, float]:
    """The place the point is in: (feature, km from the point to its centre).

    1. The country is the Natural Earth polygon that contains the point (country_grid.py);
       where two countries meet, the finer OpenStreetMap-derived one (borders.py).
    2. Candidates are the places at most REACH_KM farther than the nearest place, in that
       country when any is (a point at sea or on unclaimed land keeps them all).
    3. The winner has the smallest distance relative to its reach (its size, see
       data.reach_chord): a city of 2 M people 4 km away beats a suburb of 60,000 3 km
       away, a village 1 km away beats a city 10 km away.
    Most cells of the grid (nearest_grid.py) lie in one country and list just its
    candidates, often a single one: those answer without a country test, and comparing
    their few unit vectors in plain Python beats any numpy or KD-tree call for one point.
    Cells crossed by a border find the country first, then take that country's list
    (country_lists.py); the densest cells ask the KD-tree."""
    fast = data.fast
    # unit_vector and cell_of, inlined: this is the hot path of reverse_geocode
    phi, lam = radians(lat), radians(lon)
    cos_phi = cos(phi)
    qx, qy, qz = cos_phi * cos(lam), cos_phi * sin(lam), sin(phi)
    row = int((lat + 90.0) * CELLS_PER_DEG)
    cell = (row if row < ROWS else ROWS - 1) * COLS + int((lon + 180.0) * CELLS_PER_DEG) % COLS
    start, end = fast.grid_off[cell], fast.grid_off[cell + 1]
    if fast.grid_filter[cell] == GENERAL:
        best = _general(data, lat, lon, cell, (qx, qy, qz))
    elif end - start == 1:
        best = fast.grid_cand[start]
    elif end - start <= SHORT_LIST:
        best = _best(fast, fast.grid_cand[start:end], qx, qy, qz)
    else:
        best = _best_in_sub_cell(data, lat, lon, cell, (qx, qy, qz))
    # great-circle km from the chord (its squared parts do not cancel for short chords)
    xyz, at = fast.xyz, 3 * best
    dx, dy, dz = xyz[at] - qx, xyz[at + 1] - qy, xyz[at + 2] - qz
    half_chord = min(1.0, sqrt(dx * dx + dy * dy + dz * dz) / 2.0)
    return fast.features[best], 2.0 * EARTH_RADIUS_KM * asin(half_chord)


def _best(fast: FastViews, candidates: Sequence[int], qx: float, qy: float, qz: float) -> int:
    """The candidate with the smallest chord / reach among those at most REACH_KM beyond
    the nearest of them (compared squared, which orders the same)."""
    xyz, inverse_reach_sq = fast.xyz, fast.inverse_reach_sq
    dots = []
    nearest_dot = -1.0
    for candidate in candidates:  # one loop for the dots and their maximum: ~20% faster
        at = 3 * candidate
        dot = xyz[at] * qx + xyz[at + 1] * qy + xyz[at + 2] * qz
        dots.append(dot)
        if dot > nearest_dot:
            nearest_dot = dot
    # chord <= nearest chord + REACH_CHORD, as a bound on the dot product
    limit = sqrt(max(0.0, 2.0 - 2.0 * nearest_dot)) + REACH_CHORD
    least_dot = 1.0 - limit * limit / 2.0
    best, best_score = -1, float("inf")
    for candidate, dot in zip(candidates, dots, strict=True):
        if dot >= least_dot:
            score = (2.0 - 2.0 * dot) * inverse_reach_sq[candidate]
            if score < best_score:
                best, best_score = candidate, score
    return best


def _best_in_sub_cell(
    data: GeoData, lat: float, lon: float, cell: int, unit: tuple[float, float, float]
) -> int:
    """A long list is split into sub-cells (reverse_build.split_long_lists)."""
    fast = data.fast
    row, col = divmod(cell, COLS)
    sub_row = min(int(((lat + 90.0) * CELLS_PER_DEG - row) * SPLIT), SPLIT - 1)
    sub_col = min(int(((lon + 180.0) * CELLS_PER_DEG) % 1.0 * SPLIT), SPLIT - 1)
    sub = fast.grid_sub[cell] + sub_row * SPLIT + sub_col
    start, end = fast.sub_off[sub], fast.sub_off[sub + 1]
    if end - start == 1:
        return int(fast.sub_cand[start])
    if end - start <= SUB_SHORT_LIST:
        return _best(fast, fast.sub_cand[start:end], *unit)
    return _best_many(data, data.sub_cand[start:end], unit, NO_COUNTRY)


def _general(
    data: GeoData, lat: float, lon: float, cell: int, unit: tuple[float, float, float]
) -> int:
    """A cell crossed by a border (the point's country decides which places count), or
    one too dense to list its candidates (the KD-tree's nearest places stand in)."""
    fast = data.fast
    refined = data.borders.country(fast, lat, lon, cell) if fast.cc_border[cell] else None
    if refined is not None:
        country = refined
    else:
        country = country_at(
            lat, lon, cell, fast.cc_cell, fast.cc_off, fast.cc_edge, fast.cc_edge_country
        )
    if country != NO_COUNTRY and not fast.inhabited[country]:
        country = NO_COUNTRY  # nothing to name there (Antarctica)
    if country != NO_COUNTRY:
        key = cell * KEY_STRIDE + country  # the cell's places of that country
        at = bisect_left(fast.cl_key, key)
        if at < len(fast.cl_key) and fast.cl_key[at] == key:
            start, end = fast.cl_off[at], fast.cl_off[at + 1]
            if start == end:
                country = NO_COUNTRY  # none among the nearest places (country_lists.py)
            elif end - start <= SUB_SHORT_LIST:
                return _best(fast, fast.cl_cand[start:end], *unit)
            else:
                return _best_many(data, data.cl_cand[start:end], unit, NO_COUNTRY)
    if country == NO_COUNTRY:  # the nearest places, wherever they are
        start, end = fast.grid_off[cell], fast.grid_off[cell + 1]
        if 0 < end - start <= SHORT_LIST:
            return _best(fast, fast.grid_cand[start:end], *unit)
        if end > start:
            return _best_many(data, data.grid_cand[start:end], unit, NO_COUNTRY)
    near = data.localities.tree.query(unit, k=COUNTRY_FALLBACK)[1]
    best = _best_many(data, near, unit, country)
    return best if best >= 0 else _best_many(data, near, unit, NO_COUNTRY)


def _best_many(
    data: GeoData, candidates: npt.NDArray[Any], unit: tuple[float, float, float], country: int
) -> int:
    """_best over an array of candidates, restricted to `country` unless NO_COUNTRY;
    -1 if none is in the country."""
    if country != NO_COUNTRY:
        candidates = candidates[data.locality_country[candidates] == country]
        if len(candidates) == 0:
            return -1
    dots = data.locality_xyz[candidates] @ unit
    limit = sqrt(max(0.0, 2.0 - 2.0 * float(dots.max()))) + REACH_CHORD
    eligible = dots >= 1.0 - limit * limit / 2.0
    candidates, dots = candidates[eligible], dots[eligible]
    return int(candidates[int(np.argmin((1.0 - dots) * data.inverse_reach_sq[candidates]))])


def reverse(data: GeoData, args: ReverseGeocodeArgs) -> ReverseGeocodeResult:
    feature, km = nearest_locality(data, args.lat, args.lon)
    on_water = water_kind(data, args.lat, args.lon)
    if km > MAX_REVERSE_KM:
        return remote(data, args.lat, args.lon, on_water)
    nearest_at_sea = at_sea(data, args.lat, args.lon, km)
    if nearest_at_sea is not None and (on_water or not on_land(data, args.lat, args.lon)):
        return at_sea_answer(data, *nearest_at_sea, on_water)
    answer = _in_country(data, args, feature, km)
    if on_water is None or lacks_the_land(data, answer.lat, answer.lon, answer.distance_km):
        return answer
    return on_water_answer(answer, on_water)


def _in_country(
    data: GeoData, args: ReverseGeocodeArgs, feature: int, km: float
) -> ReverseGeocodeResult:
    """The answer for a point in a country: its place, admin1, county, postal codes."""
    country_code = data.country_code(feature)
    county = data.counties.at(args.lat, args.lon) if country_code == "US" else None
    warnings: list[str] = []
    admin1 = data.admin1_name(feature)
    if county is not None:  # the state and county that hold the point, a place of that state
        place = place_in_state(data, args.lat, args.lon, county, feature, km)
        feature, km, warnings = place.feature, place.km, place.warnings
        admin1 = county.state
        if county.basis == "nearest_county":
            warnings.append(f"The point is just off {county.name}'s shore (the nearest county)")
    elif country_code != "US" and data.regions.available:  # regions.py: the same elsewhere
        feature, km, admin1, warnings = _in_region(data, args.lat, args.lon, feature, km)
    zips = None
    if country_code in ZIP_COUNTRIES:
        zips = estimate(data, args.lat, args.lon, county)  # zip_estimate.py
    elif country_code in data.postal_countries:  # outside the US: postal_build.py's codes
        codes, town_only = postal_codes.nearest_codes(
            data, args.lat, args.lon, MAX_ZIP_KM, ZIP_OFFERED
        )
        uncertain = bool(town_only) or comparably_close([c.distance_m for c in codes])
        zips = ZipAnswer(codes, uncertain, "nearest_centre")
        warnings += town_only
    return ReverseGeocodeResult(
        **place_fields(data, feature, km),
        country_code=country_code,
        country=data.country_name(feature),
        admin1=admin1,
        admin2=county.name if county else data.admin2_name(feature),
        county_fips=county.fips if county else None,
        postal_code_basis=zips.basis if zips and zips.candidates else None,
        nearest_postal_code=zips.candidates[0] if zips and zips.candidates else None,
        postal_code_candidates=zips.candidates if zips else [],
        postal_code_uncertain=zips.uncertain if zips else None,
        warnings=warnings,
    )


def _in_region(
    data: GeoData, lat: float, lon: float, feature: int, km: float
) -> tuple[int, float, str | None, list[str]]:
    """The place and admin1 for a point outside the US: the region whose polygon holds the
    point and a place of it; the nearest place's own region when no polygon of the
    point's country holds it (said in the warnings)."""
    region = data.regions.at(lat, lon)
    if region is None or data.admin1_rows[region.admin1]["country"] != int(data.country[feature]):
        name = data.admin1_name(feature)
        if name is None:
            return feature, km, None, []
        return (
            feature,
            km,
            name,
            [f"admin1 is {data.names[feature]}'s: no boundary holds the point"],
        )
    place = place_in_region(data, lat, lon, region, feature, km)
    name = data.admin1_rows[place.admin1]["name"]
    if region.basis == "nearest_region" and place.admin1 == region.admin1:
        place.warnings.append(f"The point is just off {name}'s edge (the nearest region)")
    return place.feature, place.km, name, place.warnings


def _point_set(data: GeoData, category: str) -> PointSet:
    sets = {"city": data.localities, "airport": data.airports, "postal_code": data.postal}
    if category not in sets:
        raise Unsupported(
            f"category {category!r} needs the upstream provider (OpenStreetMap), which is not "
            f"enabled for search_nearby here; offline categories: {', '.join(CATEGORIES)}"
        )
    return sets[category]


def nearby(data: GeoData, args: SearchNearbyArgs) -> SearchNearbyResult:
    points = _point_set(data, args.category)
    radius_km = args.radius_m / 1000.0
    # a hair of slack on the chord; the exact haversine filter below decides
    hits = np.asarray(
        points.tree.query_ball_point(
            unit_vector(args.lat, args.lon), r=km_to_chord(radius_km) * (1 + 1e-9) + 1e-12
        ),
        dtype=np.intp,
    )
    features = points.features[hits]
    metres = haversine_km_many(args.lat, args.lon, data.lat[features], data.lon[features]) * 1000
    inside = metres <= args.radius_m
    hits, features, metres = hits[inside], features[inside], metres[inside]
    if args.category == "postal_code":  # and those outside the US (no prominence: no hits)
        more_features, km = postal_codes.within(data, args.lat, args.lon, radius_km)
        features = np.concatenate([features, more_features])
        metres = np.concatenate([metres, km * 1000])
        hits = np.arange(len(features), dtype=np.intp)
    total = len(features)
    offset = offset_of(args.cursor)
    if total == 0:
        raise NotFound(f"No {args.category} within {args.radius_m:g} m of ({args.lat}, {args.lon})")
    if offset >= total:
        raise past_the_last_page(args.category, total)
    prominence = _prominence(data, args, hits, features)
    order = nearby_order(prominence, metres, features)[offset : offset + args.limit]
    more = offset + args.limit < total
    results = [
        _nearby_place(data, args.category, int(features[i]), int(hits[i]), float(metres[i]))
        for i in order
    ]
    return SearchNearbyResult(
        category=args.category,
        radius_m=args.radius_m,
        order="distance" if prominence is None or args.category == "postal_code" else "prominence",
        results=results,
        total=total,
        truncated=more,
        next_cursor=cursor_at(offset + args.limit) if more else None,
        source=attribution.PLACES,
        dataset=attribution.places_dataset(data.meta),
    )


def _prominence(
    data: GeoData, args: SearchNearbyArgs, hits: npt.NDArray[np.intp], features: npt.NDArray[Any]
) -> npt.NDArray[Any] | None:
    """What ranks the places in range (prominence.py); None to list them nearest first."""
    if args.order == "distance" and args.category != "postal_code":
        return None
    if args.category == "airport":
        return data.airport_prominence[hits]
    if args.category == "city":
        return np.asarray(data.population[features])
    return postal_codes.exact_first(data, features)  # by distance, those at a town's last


def _nearby_place(
    data: GeoData, category: str, feature: int, row: int, metres: float
) -> NearbyPlace:
    airport_type, scheduled = data.airport_class_at(row) if category == "airport" else (None, None)
    return NearbyPlace(
        name=data.names[feature],
        category=category,
        lat=float(data.lat[feature]),
        lon=float(data.lon[feature]),
        distance_m=round(metres, 1),
        code=data.codes[feature] or None,
        country_code=data.country_code(feature),
        type=airport_type,
        scheduled_service=scheduled,
        population=int(data.population[feature]) if category == "city" else None,
        position_precision=postal_codes.precision(data, feature)
        if category == "postal_code"
        else None,
    )
