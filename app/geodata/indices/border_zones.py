"""Which timezone polygons may stand in for a country near its border (index build).

Natural Earth 1:10m borders are a few hundred metres off in places (the Neisse at
Görlitz, St. Peter's Square, Büsingen), so reverse_geocode asks a finer source near a
border: timezone-boundary-builder's polygons (from OpenStreetMap boundaries, shipped in
`timezonefinder-data`), read with `timezonefinder`. A tzdb zone belongs to one country
(tzdata's zone.tab names it: Europe/Vatican VA, Europe/Busingen DE), but a zone is not
always all of one Natural Earth country: Europe/Belgrade covers Serbia and Kosovo. So a
zone is trusted only when the Natural Earth countries of the grid cells it covers are
(almost) all its zone.tab country; the others are left to Natural Earth.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from app.geodata.indices.nearest_grid import COLS, ROWS, STEP_DEG

# a zone is trusted when at most this share of its cells lies in another Natural Earth
# country (cells along a border disagree a little between the two sources)...
MAX_FOREIGN_SHARE = 0.05
# ...or when at most this many do (small zones: Luxembourg has a handful of cells)
MAX_FOREIGN_CELLS = 2
ANTARCTIC_ROWS = int(30 / STEP_DEG)  # grid rows south of 60 S


def zone_tab_countries() -> dict[str, str]:
    """tzdb zone -> ISO 3166 country code, from tzdata's zone.tab (one country per zone)."""
    import tzdata

    path = Path(tzdata.__file__).parent / "zoneinfo" / "zone.tab"
    countries = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            parts = line.split("\t")
            countries[parts[2]] = parts[0]
    return countries


def trusted_zone_countries(cc_cell: Any, country_index: Mapping[str, int]) -> dict[str, int]:
    """zone name -> country index, for the zones that stand for one Natural Earth country."""
    from timezonefinder import TimezoneFinder

    finder = TimezoneFinder(in_memory=False)
    tab = zone_tab_countries()
    centre = np.asarray(cc_cell).reshape(ROWS, COLS)
    votes: dict[str, Counter[int]] = defaultdict(Counter)
    rows, cols = np.nonzero(centre >= 0)  # land cells of a country we name
    keep = rows >= ANTARCTIC_ROWS  # Antarctic bases' zones cover slices of the ice
    rows, cols = rows[keep], cols[keep]
    lats = -90.0 + (rows + 0.5) * STEP_DEG
    lons = -180.0 + (cols + 0.5) * STEP_DEG
    cell_countries = centre[rows, cols].tolist()
    for lat, lon, country in zip(lats.tolist(), lons.tolist(), cell_countries, strict=True):
        zone = finder.timezone_at_land(lng=lon, lat=lat)
        if zone is not None:
            votes[zone][country] += 1
    trusted = {}
    for zone, code in tab.items():
        country = country_index.get(code)
        if country is None:
            continue
        cast = votes.get(zone, Counter())
        foreign = sum(cast.values()) - cast[country]
        if foreign <= max(MAX_FOREIGN_CELLS, MAX_FOREIGN_SHARE * sum(cast.values())):
            trusted[zone] = country
    return trusted
