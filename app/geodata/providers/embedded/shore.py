"""Whether a point is in a country at all: on its land, or off its coast no farther than
the territorial sea. reverse_geocode names no town, state or county for a point beyond.

Land is Natural Earth 1:10m's country polygons (country_grid.py), the border data the
index already has. Their coasts are generalised (a harbour, an estuary or a narrow bay is
often water in them, an atoll may be missing), so a point counts as in a country up to
TERRITORIAL_SEA_KM off its land, or off a populated place (whose centre is on land the
polygons may lack): the 12 nautical miles of a territorial sea (UNCLOS art. 3), which a
few hundred metres of coastline error does not upset. Where a country's waters reach
farther (archipelagic waters, a bay or a lake Natural Earth leaves as water, such as Lake
Maracaibo) the point is still said to be at sea; the answer names the nearest place.

Edges are stored per cell of the 0.25-degree grid (every cell each edge passes through),
so the edges within TERRITORIAL_SEA_KM of a point are among those of the few cells around
it; distances are measured on the equirectangular plane around the point, each degree of
longitude scaled at the mean latitude of the point and the vertex (well under 1% off at
this range)."""

from __future__ import annotations

from math import cos, floor, radians

import numpy as np
import numpy.typing as npt

from app.geodata.geometry import EARTH_RADIUS_KM, chord_to_km, unit_vector
from app.geodata.indices.country_grid import NO_COUNTRY, country_at
from app.geodata.indices.nearest_grid import CELLS_PER_DEG, COLS, ROWS
from app.geodata.providers.embedded.data import FastViews, GeoData

TERRITORIAL_SEA_KM = 22.224  # 12 nautical miles
KM_PER_DEG = radians(1.0) * EARTH_RADIUS_KM


def at_sea(data: GeoData, lat: float, lon: float, place_km: float) -> tuple[int, float] | None:
    """(feature, km) of the nearest place when (lat, lon) is at sea, None when it is in a
    country. place_km: how far nearest_locality's place is (within TERRITORIAL_SEA_KM the
    point is in its country, and nothing else need be asked: the common case)."""
    if place_km <= TERRITORIAL_SEA_KM or near_land(data.fast, lat, lon):
        return None
    chord, row = data.localities.tree.query(unit_vector(lat, lon))
    km = float(chord_to_km(chord))
    return None if km <= TERRITORIAL_SEA_KM else (int(data.localities.features[row]), km)


def near_land(fast: FastViews, lat: float, lon: float) -> bool:
    """True when (lat, lon) is on a country's land or within TERRITORIAL_SEA_KM of it
    (populated places are the caller's to check)."""
    row = min(int((lat + 90.0) * CELLS_PER_DEG), ROWS - 1)
    cell = row * COLS + int((lon + 180.0) * CELLS_PER_DEG) % COLS
    if fast.cc_off[cell] == fast.cc_off[cell + 1] and fast.cc_cell[cell] != NO_COUNTRY:
        return True  # inland: one array read
    country = country_at(
        lat, lon, cell, fast.cc_cell, fast.cc_off, fast.cc_edge, fast.cc_edge_country
    )
    return country != NO_COUNTRY or shore_km(fast, lat, lon) <= TERRITORIAL_SEA_KM


def shore_km(fast: FastViews, lat: float, lon: float) -> float:
    """km from (lat, lon) to the nearest country edge within TERRITORIAL_SEA_KM of it,
    inf if there is none that near."""
    reach_deg = TERRITORIAL_SEA_KM / KM_PER_DEG
    south, north = max(lat - reach_deg, -90.0), min(lat + reach_deg, 90.0)
    # a degree of longitude is shortest on the poleward side of the window
    poleward = cos(radians(max(abs(south), abs(north))))
    reach_lon = 180.0 if poleward * 180.0 <= reach_deg else reach_deg / poleward
    rows = range(
        int((south + 90.0) * CELLS_PER_DEG), min(int((north + 90.0) * CELLS_PER_DEG), ROWS - 1) + 1
    )
    first = floor((lon - reach_lon + 180.0) * CELLS_PER_DEG)
    last = floor((lon + reach_lon + 180.0) * CELLS_PER_DEG)
    cols = {col % COLS for col in range(first, min(last, first + COLS - 1) + 1)}
    spans = [
        (fast.cc_off[row * COLS + col], fast.cc_off[row * COLS + col + 1])
        for row in rows
        for col in cols
    ]
    spans = [(start, end) for start, end in spans if end > start]
    if not spans:
        return float("inf")
    flat = np.frombuffer(fast.cc_edge, dtype=np.float32)
    edges = np.concatenate([flat[4 * start : 4 * end] for start, end in spans])
    edges = edges.astype(np.float64).reshape(-1, 4)
    # km east and north of the point; longitudes unwrapped to within 180 degrees of it
    x1, y1 = plane_km(edges[:, 0], edges[:, 1], lat, lon)
    x2, y2 = plane_km(edges[:, 2], edges[:, 3], lat, lon)
    dx, dy = x2 - x1, y2 - y1
    length_sq = dx * dx + dy * dy
    # the segment's point nearest the origin (the query point), clamped to its ends
    t = np.clip(
        -(x1 * dx + y1 * dy) / np.where(length_sq > 0.0, length_sq, 1.0),
        0.0,
        1.0,
    )
    km = float(np.hypot(x1 + t * dx, y1 + t * dy).min())
    return km if km <= TERRITORIAL_SEA_KM else float("inf")


def plane_km(
    lons: npt.NDArray[np.float64], lats: npt.NDArray[np.float64], lat: float, lon: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(km east, km north) of (lat, lon) for each vertex, longitudes taken within 180
    degrees of lon (shore_km's window is a few degrees wide but within a few km of a pole,
    where no place is near enough for reverse_geocode to ask)."""
    east = (lons - lon + 180.0) % 360.0 - 180.0
    x = east * np.cos(np.radians((lats + lat) / 2.0)) * KM_PER_DEG
    return x, (lats - lat) * KM_PER_DEG
