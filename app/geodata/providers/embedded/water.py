"""Whether a point is on water (a lake, or the sea however near a coast) or on land, by
GSHHG's high-resolution shoreline (indices/water_grid.py).

Its coast is 0.2 km fine, so a point within SHORE_MARGIN_KM of it counts as on land: a
quay, a beach or a harbour's edge is not said to be on water on the strength of a line
that may be off by that much. Past it the point is on water, whatever country's waters
those are: reverse_geocode names the nearest place as the nearest, not one the point is in.
Small islands and atolls are missing from the shoreline (Tristan da Cunha, Pingelap):
where the named place's own centre, within ISLAND_KM of the point, is on its water too,
the shoreline lacks that land and reverse_geocode says nothing of water (a village on an
island farther out in a lake does not make the lake land).
"""

from __future__ import annotations

from app.geodata.indices.water_grid import LAND, shore_km, water_at
from app.geodata.providers.embedded.data import GeoData

SHORE_MARGIN_KM = 0.3
ISLAND_KM = 5.0  # how far land the shoreline lacks may reach from a place's centre


def water_kind(data: GeoData, lat: float, lon: float) -> str | None:
    """ "lake" or "sea" when (lat, lon) is on water farther than SHORE_MARGIN_KM from the
    shore, else None (on land, or too near the shore to tell)."""
    grid = data.water
    kind = water_at(lat, lon, grid.cell, grid.off, grid.edge, grid.edge_class)
    if kind == LAND or shore_km(lat, lon, grid.off, grid.edge, SHORE_MARGIN_KM) < float("inf"):
        return None
    return kind


def on_land(data: GeoData, lat: float, lon: float) -> bool:
    """Whether (lat, lon) is on land by the shoreline (without the margin)."""
    grid = data.water
    return water_at(lat, lon, grid.cell, grid.off, grid.edge, grid.edge_class) == LAND


def lacks_the_land(data: GeoData, place_lat: float, place_lon: float, km: float) -> bool:
    """Whether the shoreline misses the land of a place km from the point (its centre on
    water too, and near enough for that land to hold the point)."""
    return km <= ISLAND_KM and water_kind(data, place_lat, place_lon) is not None
