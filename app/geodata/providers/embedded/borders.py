"""Exact borders where they matter: in the cells of the country grid where two countries
meet, the country comes from timezone-boundary-builder's OpenStreetMap-derived polygons
(see indices/border_zones.py for which zones may stand for a country). Natural Earth
1:10m strays a few hundred metres (rarely a kilometre or two) from the true border and
leaves out small enclaves (Baarle-Hertog's). Asking the polygons (~7 us) is cheaper than
measuring how far the point is from Natural Earth's edges.

timezonefinder memory-maps its ~32 MB of coordinates and is opened on the first point
that needs it (about 0.4 s), so start-up and the points far from a border never pay."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any


class BorderRefiner:
    def __init__(self, zone_countries: Mapping[str, int]) -> None:
        self._zone_countries = dict(zone_countries)
        self._finder: Any = None
        self._lock = threading.Lock()

    @property
    def zone_countries(self) -> dict[str, int]:
        """tzdb zone -> country index, for the zones trusted to stand for one country."""
        return self._zone_countries

    @property
    def opened(self) -> bool:
        return self._finder is not None

    def _open(self) -> Any:
        with self._lock:
            if self._finder is None:
                from timezonefinder import TimezoneFinder

                self._finder = TimezoneFinder(in_memory=False)
        return self._finder

    def country(self, fast: Any, lat: float, lon: float, cell: int) -> int | None:
        """The country of (lat, lon) in a cell where two countries meet, by the finer
        source, when its zone stands for one of the cell's countries; else None (Natural
        Earth decides)."""
        finder = self._finder or self._open()
        # timezone_at, not timezone_at_land: the ocean zones ("Etc/GMT+3") stand for no
        # country, so the lookup below drops them just the same, one call sooner
        refined = self._zone_countries.get(finder.timezone_at(lng=lon, lat=lat))
        if refined is None:
            return None
        # one of the cell's countries: its centre's, or one whose edges pass through it
        # (read in place, no set built: this runs per query)
        if refined == fast.cc_cell[cell]:
            return refined
        return (
            refined
            if refined in fast.cc_edge_country[fast.cc_off[cell] : fast.cc_off[cell + 1]]
            else None
        )
