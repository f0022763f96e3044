"""Postal codes in a query, and near a point, worldwide (US ZIP codes and postal_build.py's
codes of other countries).

A query's postal codes are its tokens that hold a digit ("10115", "1000-001", "LV-1001"),
and full codes of the countries whose data is shorter: a British postcode is looked up by
its outward code ("SW1A 1AA" -> SW1A), a Canadian one by its first three characters
("M5V 3L9" -> M5V), a Dutch one by its digits ("3011 AB" -> 3011). The same digits are a
code in several countries ("10115": New York and Berlin); geocoder.py decides which one the
rest of the query confirms.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from math import ceil, cos, radians
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.geometry import haversine_km, haversine_km_many
from app.geodata.indices.postal_build import CELL_DEG, GRID_COLS, GRID_ROWS, postal_key
from app.geodata.indices.store import KIND_ADMIN1, KIND_COUNTRY
from app.geodata.providers.embedded.data import GeoData
from app.geodata.text import key_hash
from app.geodata.tools.reverse_geocode.schemas import NearestPostalCode

_FULL_FORMS = (
    re.compile(r"\b([A-Z]{1,2}\d[A-Z\d]?)\s?\d[A-Z]{2}\b"),  # GB: SW1A 1AA
    re.compile(r"\b([A-Z]\d[A-Z])\s?\d[A-Z]\d\b"),  # CA: M5V 3L9
    re.compile(r"\b(\d{4})\s?[A-Z]{2}\b"),  # NL: 3011 AB
)
_TOKEN = re.compile(r"(?<![\w-])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?![\w-])")
_US_ZIP = re.compile(r"^(\d{5})(?:-\d{4})?$")
KM_PER_CELL = CELL_DEG * 111.19  # north-south extent of a grid cell


@dataclass(frozen=True)
class Token:
    text: str  # as written in the query
    key: str  # postal_key() of the code it names
    start: int
    end: int
    held_as: str = ""  # the code the data holds it by, as written there, when not `key`


def tokens(query: str, is_country: set[str]) -> list[Token]:
    """The parts of `query` that may be postal codes, left to right, not overlapping.
    A full-form match whose letters are a country code ("1010 AT") is read as digits."""
    found: list[Token] = []
    taken: list[tuple[int, int]] = []
    # British and Canadian codes in any case; Dutch letters only as written ("2000 NY")
    upper = "".join(ch.upper() if ch.isascii() else ch for ch in query)
    for form, text in zip(_FULL_FORMS, (upper, upper, query), strict=True):
        for match in form.finditer(text):
            if form is _FULL_FORMS[2] and match.group(0)[-2:] in is_country:
                continue
            if any(match.start() < e and s < match.end() for s, e in taken):
                continue
            taken.append(match.span())
            span = query[match.start() : match.end()]
            found.append(Token(span, match.group(1), *match.span()))
    for match in _TOKEN.finditer(query):
        text = match.group(0)
        if not any(ch.isdigit() for ch in text) or not 2 <= len(text) <= 10:
            continue
        if any(match.start() < e and s < match.end() for s, e in taken):
            continue
        us = _US_ZIP.match(text)
        found.append(Token(text, us.group(1) if us else postal_key(text), *match.span()))
    return sorted(found, key=lambda t: t.start)


def without(query: str, found: list[Token]) -> str:
    """The query with its postal codes blanked out (commas kept)."""
    chars = list(query)
    for token in found:
        chars[token.start : token.end] = " " * (token.end - token.start)
    return "".join(chars)


def without_known(data: GeoData, query: str, is_country: set[str]) -> str:
    """The query with the postal codes that exist blanked out."""
    return without(query, [t for t in tokens(query, is_country) if features_of(data, t.key)])


def features_of(data: GeoData, key: str) -> list[int]:
    """Every postal-code feature with the code `key` (postal_key form), US ZIPs first."""
    features = []
    if len(key) == 5 and key.isdigit():
        row = data.zip_row(key)
        if row is not None and int(data.zip_feature[row]) >= 0:
            features.append(int(data.zip_feature[row]))
    target = np.uint64(key_hash(key))
    lo = int(np.searchsorted(data.postal_key, target, side="left"))
    hi = int(np.searchsorted(data.postal_key, target, side="right"))
    features.extend(int(f) for f in data.postal_key_feature[lo:hi])
    return features


def within(
    data: GeoData, lat: float, lon: float, km: float
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
    """Foreign postal codes at most `km` from the point, and their distances (unsorted)."""
    rows_span = ceil(km / KM_PER_CELL) + 1
    row = min(int((lat + 90.0) / CELL_DEG), GRID_ROWS - 1)
    top = min(GRID_ROWS - 1, row + rows_span)
    bottom = max(0, row - rows_span)
    widest = max(abs(-90.0 + bottom * CELL_DEG), abs(-90.0 + (top + 1) * CELL_DEG))
    shrink = cos(radians(min(widest, 89.9)))
    cols_span = min(GRID_COLS // 2, ceil(km / (KM_PER_CELL * shrink)) + 1)
    col = int((lon + 180.0) / CELL_DEG) % GRID_COLS
    rows = np.arange(bottom, top + 1, dtype=np.int64)
    cols = np.unique(np.arange(col - cols_span, col + cols_span + 1, dtype=np.int64) % GRID_COLS)
    cells = (rows[:, None] * GRID_COLS + cols[None, :]).ravel()
    at = np.searchsorted(data.postal_cell, cells)
    at = np.minimum(at, len(data.postal_cell) - 1)
    present = at[data.postal_cell[at] == cells]
    if len(present) == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(0)
    offsets = data.postal_cell_off
    features = np.concatenate(
        [data.postal_cell_feature[offsets[i] : offsets[i + 1]] for i in present]
    )
    distances = haversine_km_many(lat, lon, data.lat[features], data.lon[features])
    close = distances <= km
    return np.asarray(features[close], dtype=np.int32), np.asarray(distances[close])


def nearest(
    data: GeoData, lat: float, lon: float, max_km: float, count: int = 1
) -> list[tuple[int, float]]:
    """The `count` nearest foreign postal codes (one centre each) at most `max_km` away:
    (feature, km), nearest first. Small radii first: a dense city (Singapore lists 120,000
    codes) answers from a few cells."""
    for km in (2.0, 10.0, max_km):
        features, distances = within(data, lat, lon, min(km, max_km))
        found: dict[str, tuple[int, float]] = {}
        for at in np.argsort(distances, kind="stable").tolist():
            code = data.names[int(features[at])]
            if code not in found:
                found[code] = (int(features[at]), float(distances[at]))
                if len(found) == count:
                    break
        if len(found) == count or km >= max_km:
            return list(found.values())
    return []


def rank(data: GeoData, feature: int) -> float:
    """What ranks a postal code in geocode: a US ZIP's residents; elsewhere its country's
    population / 100,000 (bare '75008' is first the French one, '10001' the US ZIP)."""
    if feature < data.postal_first:
        return float(data.population[feature])
    country = int(data.country[feature])
    people = float(data.countries[country]["population"] or 0) if country >= 0 else 0.0
    return max(1.0, people / 100_000)


CONFIRM_KM = 60.0  # a city confirms the postal codes this close to its centre


def confirms(data: GeoData, place: int, postal: int) -> bool:
    """Whether a place named in the query is where the postal code lies: its country, its
    admin1 (when the code's is known), or a city or airport within CONFIRM_KM."""
    country = int(data.country[postal])
    if country < 0 or int(data.country[place]) != country:
        return False
    kind = int(data.kind[place])
    if kind == KIND_COUNTRY:
        return True
    if kind == KIND_ADMIN1:
        return int(data.admin1[postal]) in (-1, int(data.admin1[place]))
    lat, lon = float(data.lat[postal]), float(data.lon[postal])
    return haversine_km(float(data.lat[place]), float(data.lon[place]), lat, lon) <= CONFIRM_KM


def unused_code(token: Token, place_label: str) -> str:
    return (
        f"{token.text!r} was not used: no postal code {token.text!r} is known in or near "
        f"{place_label}"
    )


def unused_text(token: Token, rest: str) -> str:
    return f"only the postal code {token.text!r} matched; {rest!r} matched no place"


def coarser(token: Token) -> str | None:
    """A warning when the data holds the code by a part of it ("SW1A 1AA" by its district
    SW1A, "78701-1234" by its ZIP Code, "01310-100" by São Paulo's "01000-000"): the
    point is that area's, not the code's."""
    if token.key == postal_key(token.text):
        return None
    return (
        f"postal code {token.text!r} was looked up as {token.held_as or token.key!r}, the "
        f"area the data holds it by: the point is that area's centre, not the postal code's"
    )


# Where the data holds only the first code of each town's range (Brazil's "01000-000" is
# São Paulo's 01000-000 to 05999-999; Chile's "8320000" Santiago's), not every code.
RANGE_START_COUNTRIES = ("BR", "CL")


def held_form(data: GeoData, token: Token) -> Token:
    """The token, or, when the data holds no such code but holds its country's codes only
    by the first of each town's range (RANGE_START_COUNTRIES: "01310-100" is in São
    Paulo's range, "01000-000"), the start of the range it falls in."""
    if not token.key.isdigit() or features_of(data, token.key):
        return token
    # postal_build.py adds the codes sorted by country, then code: a block per country
    start = data.postal_first
    for cc, count in data.postal_countries.items():
        if cc in RANGE_START_COUNTRIES:
            held = [data.names[f] for f in range(start, start + count)]
            keys = [postal_key(code) for code in held]
            at = bisect_right(keys, token.key) - 1
            # same length and first digit: a range never spans a region's first digit
            if at >= 0 and len(keys[at]) == len(token.key) and keys[at][0] == token.key[0]:
                return replace(token, key=keys[at], held_as=held[at])
        start += count
    return token


COLLAPSED = 4  # this many codes of a country on one point are placed at their town


def sharing(data: GeoData, feature: int) -> int:
    """How many codes share the postal code's point (1 for a US ZIP: Census centroids)."""
    return (
        1 if feature < data.postal_first else int(data.postal_shared[feature - data.postal_first])
    )


def precision(data: GeoData, feature: int) -> str | None:
    """'city' when the code's point is only its town's (COLLAPSED codes or more on it)."""
    return "city" if sharing(data, feature) >= COLLAPSED else None


def exact_first(data: GeoData, features: npt.NDArray[Any]) -> npt.NDArray[np.int8]:
    """Per postal code: 1 when its point is its own, 0 when only its town's (ranked after
    every exact one: its distance says nothing of where the code is)."""
    foreign = features >= data.postal_first
    shared = np.ones(len(features), dtype=np.int64)
    shared[foreign] = data.postal_shared[features[foreign] - data.postal_first]
    return np.asarray(shared < COLLAPSED, dtype=np.int8)


def city_level(data: GeoData, feature: int) -> str | None:
    """A warning when a geocoded code's point is only its town's."""
    shared = sharing(data, feature)
    if shared < COLLAPSED:
        return None
    return (
        f"postal code {data.names[feature]!r} has only its town's position in the data "
        f"(one point for {shared:,} codes of {data.postal_place[feature - data.postal_first]}): "
        f"not where in the town it is"
    )


def nearest_codes(
    data: GeoData, lat: float, lon: float, max_km: float, count: int
) -> tuple[list[NearestPostalCode], list[str]]:
    """reverse_geocode's postal codes outside the US: of the codes within the first radius
    that holds any (as nearest() widens it), the `count` nearest whose points are their
    own, then (when fewer) those placed at a town's point, and a warning naming these:
    their distance says nothing of where they are."""
    for km in (2.0, 10.0, max_km):
        features, distances = within(data, lat, lon, min(km, max_km))
        if len(features) or km >= max_km:
            break
    town = exact_first(data, features) == 0
    found: dict[str, tuple[int, float]] = {}
    for at in np.lexsort((distances, town)).tolist():
        code = data.names[int(features[at])]
        if code not in found:
            found[code] = (int(features[at]), float(distances[at]))
            if len(found) == count:
                break
    codes = [
        NearestPostalCode(code=c, distance_m=round(km * 1000, 1)) for c, (_f, km) in found.items()
    ]
    town_only = [c for c, (f, _km) in found.items() if precision(data, f)]
    if not town_only:
        return codes, []
    return codes, [
        f"postal code(s) {', '.join(town_only)} have only their town's position in the data "
        f"(one point for many codes): their distance says nothing of where they are"
    ]


def several_countries(code: str, countries: list[str]) -> str:
    return (
        f"postal code {code!r} exists in {len(countries)} countries ({', '.join(countries)}); "
        f"the first result is in {countries[0]}: pass `country` to choose"
    )
