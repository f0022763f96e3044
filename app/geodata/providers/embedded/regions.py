"""First-level regions outside the US by containment (Natural Earth admin-1 polygons, see
indices/admin1_build.py), and the place to name for a point in one.

Like the counties (counties.py), the polygons (~1.3 M points) are built on the first
point that needs them, so start-up never pays. nearest_locality ranks places by distance
relative to their size, so a big city reaches across a region's line; when the winner is
of another region the candidates are re-ranked among the places of the point's region."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from app.geodata.geometry import EARTH_RADIUS_KM, RingIndex, km_to_chord, unit_vector
from app.geodata.indices.nearest_grid import REACH_KM

if TYPE_CHECKING:
    from app.geodata.providers.embedded.data import GeoData

# how far off a region's edge (degrees, ~1-2 km) a point still takes that region: the
# polygons are at 1:10 M, so a shore point may fall just outside
NEAR_DEG = 0.02
# The polygons are generalised (1:10 M): within LINE_DEG (~2 km) of the nearest place's
# own region, a place whose centre is within NEAR_PLACE_KM of the point outweighs them
# (Oststeinbek's town centre is in Schleswig-Holstein, whatever Hamburg's outline says)
LINE_DEG = 0.02
NEAR_PLACE_KM = 2.5
# nearest places searched for one of the point's region, and how far one may be
REGION_CANDIDATES = 128
MAX_IN_REGION_KM = 60.0
REACH_CHORD = km_to_chord(REACH_KM)


@dataclass(frozen=True)
class Region:
    admin1: int  # row of the admin1 table
    basis: str  # "containment" or "nearest_region"


class RegionIndex:
    def __init__(self, arrays: dict[str, Any]) -> None:
        self._arrays = arrays
        self._tree: Any = None
        self._ring_admin1: Any = None
        self._covered: frozenset[int] | None = None
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        return "a1_xy" in self._arrays

    def _open(self) -> Any:
        with self._lock:
            if self._tree is None:
                self._ring_admin1 = np.asarray(self._arrays["a1_ring_admin1"])
                self._tree = RingIndex(self._arrays["a1_xy"], self._arrays["a1_ring_off"])
        return self._tree

    def at(self, lat: float, lon: float) -> Region | None:
        """The region whose polygon holds (lat, lon); else the nearest within NEAR_DEG."""
        if not self.available:
            return None
        tree = self._tree or self._open()
        counts: dict[int, int] = {}
        for ring in tree.containing(lon, lat):
            row = int(self._ring_admin1[ring])
            counts[row] = counts.get(row, 0) + 1  # even-odd: a hole cancels its shell
        inside = [row for row, n in counts.items() if n % 2 == 1]
        if inside:  # -1: a unit that does not match our table (admin1_build._agreeing)
            return Region(min(inside), "containment") if min(inside) >= 0 else None
        near = tree.nearest(lon, lat, NEAR_DEG)
        row = int(self._ring_admin1[near]) if near is not None else -1
        return Region(row, "nearest_region") if row >= 0 else None

    def near(self, lat: float, lon: float, admin1: int) -> bool:
        """Whether (lat, lon) may lie in `admin1`: a polygon of it within LINE_DEG, or it
        has none (a unit dropped at build time, e.g. Basel-Stadt: can't say it is not)."""
        tree = self._tree or self._open()
        if self._covered is None:
            self._covered = frozenset(np.unique(self._ring_admin1).tolist()) - {-1}
        if admin1 not in self._covered:
            return True
        rings = tree.within(lon, lat, LINE_DEG)
        return bool(np.any(self._ring_admin1[rings] == admin1))


@dataclass
class RegionPlace:
    feature: int
    km: float
    admin1: int
    warnings: list[str] = field(default_factory=list)


def place_in_region(
    data: GeoData, lat: float, lon: float, region: Region, feature: int, km: float
) -> RegionPlace:
    """`feature` when it is of the point's region, else the best place of that region."""
    own = int(data.admin1[feature])
    if own == region.admin1:
        return RegionPlace(feature, km, own)
    if own >= 0 and km <= NEAR_PLACE_KM and data.regions.near(lat, lon, own):
        return RegionPlace(
            feature,
            km,
            own,
            [
                f"On the line between {data.admin1_rows[own]['name']} and "
                f"{data.admin1_rows[region.admin1]['name']} (boundaries at 1:10 M): "
                f"admin1 is {data.names[feature]}'s"
            ],
        )
    chords, rows = data.localities.tree.query(unit_vector(lat, lon), k=REGION_CANDIDATES)
    features = data.localities.features[rows]
    mine = data.admin1[features] == region.admin1
    rows, chords, features = rows[mine], chords[mine], features[mine]
    name = data.admin1_rows[region.admin1]["name"]
    if len(rows) == 0 or _chord_km(float(chords[0])) > MAX_IN_REGION_KM:
        return RegionPlace(
            feature,
            km,
            region.admin1,
            [
                f"No populated place of {name} within {MAX_IN_REGION_KM:.0f} km: "
                f"{data.label(feature)} is the nearest, across the line"
            ],
        )
    eligible = chords <= chords[0] + REACH_CHORD
    rows, chords, features = rows[eligible], chords[eligible], features[eligible]
    best = int(np.argmin(chords**2 * data.inverse_reach_sq[rows]))
    return RegionPlace(int(features[best]), _chord_km(float(chords[best])), region.admin1)


def _chord_km(chord: float) -> float:
    return float(2.0 * EARTH_RADIUS_KM * np.arcsin(min(1.0, chord / 2.0)))
