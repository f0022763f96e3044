"""US state and county by containment (Census cartographic boundaries 1:500k, see
indices/counties_build.py): the county polygon that holds the point, hence its state.

The rings (3,233 counties, ~1 M points) are indexed by their boxes on the first point
that needs them, like the border refiner's, so start-up and the points outside the US
never pay; a county's polygon is built when a point first falls in its box, and only
the last ones asked are kept (geometry.RingIndex: a look-up ~30 us). The boundaries
follow the shoreline, so a point on a pier or just off the coast is in no county: the
nearest county within NEAR_DEG then answers, said as such (`basis` "nearest_county")."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.geodata.geometry import RingIndex

_KINDS = (" city and borough", " census area", " municipality", " borough", " parish")

# how far off a county's edge (degrees, ~1-2 km) a point still takes that county
NEAR_DEG = 0.02


def county_key(name: str | None) -> str:
    """ "Arlington County", "City of Alexandria", "Alexandria city" -> comparable keys."""
    key = (name or "").lower().replace("saint ", "st. ").replace("city of ", "")
    for suffix in (*_KINDS, " county", " city"):
        if key.endswith(suffix):
            return key[: -len(suffix)].strip()
    return key.strip()


@dataclass(frozen=True)
class County:
    fips: str  # 5 digits: state (2) + county (3)
    name: str  # "Arlington County", "Orleans Parish", "Alexandria city"
    state_code: str  # USPS, "VA"
    state: str  # "Virginia"
    basis: str  # "containment" or "nearest_county"


class CountyIndex:
    def __init__(self, arrays: dict[str, Any], rows: list[dict[str, str]]) -> None:
        self._arrays = arrays
        self._rows = rows
        self._tree: Any = None
        self._ring_county: Any = None
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        return bool(self._rows)

    def _open(self) -> Any:
        with self._lock:
            if self._tree is None:
                self._ring_county = np.asarray(self._arrays["cty_ring_county"])
                self._tree = RingIndex(self._arrays["cty_xy"], self._arrays["cty_ring_off"])
        return self._tree

    def at(self, lat: float, lon: float) -> County | None:
        """The county whose polygon holds (lat, lon); else the nearest within NEAR_DEG;
        None when there is none (outside the US, or out at sea)."""
        if not self.available:
            return None
        tree = self._tree or self._open()
        hits = tree.containing(lon, lat)
        # even-odd over each county's rings: a hole (an independent city inside its
        # county) cancels the shell around it
        counts: dict[int, int] = {}
        for ring in hits:
            county = int(self._ring_county[ring])
            counts[county] = counts.get(county, 0) + 1
        inside = [county for county, n in counts.items() if n % 2 == 1]
        if inside:
            return self._county(min(inside), "containment")
        near = tree.nearest(lon, lat, NEAR_DEG)
        if near is None:
            return None
        return self._county(int(self._ring_county[near]), "nearest_county")

    def _county(self, index: int, basis: str) -> County:
        row = self._rows[index]
        return County(row["fips"], row["name"], row["stateCode"], row["state"], basis)
