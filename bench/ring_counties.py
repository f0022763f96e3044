"""US ring cases for bench/rings.py: circles that each hold a whole county, against the
Census Bureau's July 2019 county estimates.

For a county of the Census cartographic boundaries, the circle around its box's centre
that holds all its boundary points (radius up to MAX_COUNTY_KM). The counties wholly
inside count in full; a county the circle only cuts counts by the share of its area
inside (a grid of points placed by county containment). That assumes the cut county's
people spread evenly, so a case is kept only when the cut counties bring at most
CUT_SHARE of its total both so and by where their people live, told by a source the
ring method does not use in the US: each cut county's GeoNames populated places (their
figures capped at the county's) where their points are, the rest evenly by area. The
first version checked only the even spread, and kept Randall County TX, whose circle
holds most of Amarillo (its point and people in Potter County, which the circle cuts):
its truth was far too low. The truth is then known within about CUT_SHARE / 2 where
people spread evenly, and the second check leaves out circles that take a cut county's
town. Circles reaching non-US places are left out.

The fresh set also holds county outlines as `within` polygons (`outline`), against the
county's own estimate: no cut county, so no apportioned truth.

Which counties: the first that qualify in the order of a hash of the FIPS code with a
salt. The salt "" gives the first set (tune and check halves); FRESH_SALT orders the
fresh held-out set, drawn after the claims were fixed, leaving the first set's counties
out and reaching to FRESH_MAX_COUNTY_KM.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt
from ring_outlines import thinned  # bench/, beside this script

from app.geodata.geometry import haversine_km_many
from app.geodata.providers.embedded import rings
from app.geodata.providers.embedded.area_data import tables
from app.geodata.providers.embedded.data import GeoData
from app.geodata.schemas import Circle
from app.geodata.tools.population.schemas import PopulationArgs

MAX_COUNTY_KM = 60.0
# the first set used up nearly every county that qualifies within 60 km (2 were left),
# so the fresh set reaches to the 100 km `around` allows: larger, mostly western counties
FRESH_MAX_COUNTY_KM = 100.0
CUT_SHARE = 0.15
GRID = 30
FRESH_SALT = "fresh-2026-12"
# fresh county outlines (`within`): their own salt; as for the country outlines
# (bench/ring_outlines.py), one part of 97 %+ of the area, 20,000+ people, thinned
OUTLINE_SALT = "fresh-2026-12-outline"
MAIN_PART = 0.97
MIN_OUTLINE_PEOPLE = 20_000
# the US places of a cut county are looked for this far beyond the circle's edge
PLACE_REACH_KM = 150.0

Rings = dict[int, list[tuple[int, int]]]
Place = tuple[str, float, bool]  # county FIPS, people, inside the circle
Chosen = tuple[str, str, float, float, float, float]  # FIPS, name, lat, lon, km, truth
Outline = tuple[str, str, list[list[float]], float]  # FIPS, name, [lon, lat] vertices, truth


def _area_km2(pts: np.ndarray, offsets: list[tuple[int, int]], lat0: float) -> float:
    """A county's area from its rings (shoelace in a local projection; holes wind the
    other way, so the signed sum leaves them out)."""
    total = 0.0
    kx, ky = 111.32 * np.cos(np.radians(lat0)), 110.57
    for start, stop in offsets:
        x, y = pts[start:stop, 0] * kx, pts[start:stop, 1] * ky
        total += 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    return abs(total)


class CountyCircles:
    """The county outlines and estimates, and the US places placed in their counties."""

    def __init__(self, data: GeoData) -> None:
        self.data = data
        arrays = data.counties._arrays  # noqa: SLF001 (the bench reads the index as is)
        self.rows = data.counties._rows  # noqa: SLF001
        self.xy = np.asarray(arrays["cty_xy"])
        offsets = np.asarray(arrays["cty_ring_off"]).tolist()
        self.rings_of: Rings = {}
        for ring, county in enumerate(np.asarray(arrays["cty_ring_county"]).tolist()):
            self.rings_of.setdefault(county, []).append((offsets[ring], offsets[ring + 1]))
        self.fips_row = {r["fips"]: i for i, r in enumerate(self.rows)}
        self.estimates = tables().counties
        self._place_county: dict[int, str | None] = {}

    def candidates(self, salt: str) -> list[str]:
        return sorted(
            (f for f in self.estimates if f in self.fips_row),
            key=lambda f: hashlib.sha256((salt + f).encode()).hexdigest(),
        )

    def points(self, row: int) -> npt.NDArray[np.float64]:
        return np.concatenate([self.xy[a:b] for a, b in self.rings_of[row]])

    def _county_of_place(self, feature: int) -> str | None:
        if feature not in self._place_county:
            found = self.data.counties.at(
                float(self.data.lat[feature]), float(self.data.lon[feature])
            )
            ok = found is not None and found.basis == "containment"
            self._place_county[feature] = found.fips if ok and found else None
        return self._place_county[feature]

    def places(self, lat: float, lon: float, radius: float) -> list[Place]:
        """(county FIPS, people, inside the circle) of the US populated places near it."""
        data = self.data
        features = data.localities.features
        codes = [row["code"] for row in data.countries]
        centre = Circle(lat=lat, lon=lon, radius_m=1)
        near = rings._ball(data.localities.tree, centre, radius + PLACE_REACH_KM)  # noqa: SLF001
        found = []
        for i in near.tolist():
            country = int(data.locality_country[i])
            feature = int(features[i])
            people = float(data.population[feature])
            if country < 0 or codes[country] != "US" or people <= 0:
                continue
            fips = self._county_of_place(feature)
            if fips is None:
                continue
            distance = haversine_km_many(lat, lon, [data.lat[feature]], [data.lon[feature]])[0]
            found.append((fips, people, bool(distance <= radius)))
        return found

    def cut_shares(
        self, fips: str, grid_points: int, step: float, lat: float, places: list[Place]
    ) -> tuple[float, float]:
        """The share of a cut county's people inside: by area (evenly spread), and by
        its places where their points are (capped at the county's figure) with the
        rest evenly by area."""
        row = self.fips_row[fips]
        county = self.estimates[fips].population
        area_share = min(
            1.0, grid_points * step * step / _area_km2(self.xy, self.rings_of[row], lat)
        )
        in_places = sum(p for f, p, _ in places if f == fips)
        inside = sum(p for f, p, is_in in places if f == fips and is_in)
        scale = min(1.0, county / in_places) if in_places else 0.0
        placed, inside = in_places * scale, inside * scale
        return area_share, (inside + (county - placed) * area_share) / county

    def case(
        self, fips: str, max_km: float = MAX_COUNTY_KM
    ) -> tuple[str, float, float, float, float] | None:
        """(name, lat, lon, radius km, truth) of the circle holding this county, or None
        when it is too large, cuts too many people, or reaches non-US places."""
        data, rows, estimates = self.data, self.rows, self.estimates
        county = self.fips_row[fips]
        pts = self.points(county)
        lon = (pts[:, 0].min() + pts[:, 0].max()) / 2
        lat = (pts[:, 1].min() + pts[:, 1].max()) / 2
        radius = float(haversine_km_many(lat, lon, pts[:, 1], pts[:, 0]).max()) + 0.5
        if radius > max_km:
            return None
        dlat = radius / 110.57
        dlon = radius / (111.32 * np.cos(np.radians(lat)))
        step = 2 * radius / GRID
        counts: dict[int, int] = {}
        for glat in np.linspace(lat - dlat, lat + dlat, GRID):
            for glon in np.linspace(lon - dlon, lon + dlon, GRID):
                if haversine_km_many(lat, lon, np.array([glat]), np.array([glon]))[0] > radius:
                    continue
                found = data.counties.at(float(glat), float(glon))
                if found is not None and found.basis == "containment":
                    row = self.fips_row[found.fips]
                    counts[row] = counts.get(row, 0) + 1
        full = cut = cut_by_places = 0.0
        places: list[Place] | None = None
        for row, n in counts.items():
            figure = estimates.get(rows[row]["fips"])
            if figure is None:
                return None
            others = self.points(row)
            if haversine_km_many(lat, lon, others[:, 1], others[:, 0]).max() <= radius:
                full += figure.population
                continue
            places = self.places(lat, lon, radius) if places is None else places
            by_area, by_places = self.cut_shares(rows[row]["fips"], n, step, lat, places)
            cut += figure.population * by_area
            cut_by_places += figure.population * by_places
        if full <= 0 or max(cut, cut_by_places) > CUT_SHARE * (full + cut):
            return None
        circle = Circle(lat=lat, lon=lon, radius_m=radius * 1000)
        if rings.place_part(data, circle).population > 0:  # Canada or Mexico inside
            return None
        name = rows[county]
        return f"{name['name']}, {name['stateCode']}", lat, lon, radius, full + cut

    def select(
        self,
        salt: str,
        limit: int,
        leave_out: frozenset[str] = frozenset(),
        max_km: float = MAX_COUNTY_KM,
    ) -> list[Chosen]:
        """(FIPS, name, lat, lon, radius km, truth) of the first `limit` counties that
        qualify in the order of the salted hash, leaving out `leave_out`'s FIPS."""
        chosen: list[Chosen] = []
        for fips in self.candidates(salt):
            if len(chosen) >= limit:
                break
            if fips in leave_out:
                continue
            found = self.case(fips, max_km)
            if found is not None:
                chosen.append((fips, *found))
        return chosen

    def outline(self, fips: str) -> tuple[str, list[list[float]], float] | None:
        """(name, vertices, truth) of a county as a `within` polygon: its whole estimate is
        the truth, no cut county to apportion; None when it has several sizeable parts,
        too few people, no thinned outline within the shape rules, or non-US places."""
        row = self.fips_row[fips]
        figure = self.estimates[fips].population
        if figure < MIN_OUTLINE_PEOPLE:
            return None
        parts = [self.xy[a:b] for a, b in self.rings_of[row]]
        lat0 = float(parts[0][:, 1].mean())
        areas = [_area_km2(self.xy, [ring], lat0) for ring in self.rings_of[row]]
        main = int(np.argmax(areas))
        if areas[main] < MAIN_PART * sum(areas):
            return None
        vertices = thinned(np.asarray(parts[main], dtype=np.float64))
        if vertices is None:
            return None
        shape = PopulationArgs.model_validate({"within": {"polygon": vertices}}).within
        assert shape is not None
        if rings.place_part(self.data, shape).population > 0:  # Canada or Mexico inside
            return None
        name = self.rows[row]
        return f"{name['name']}, {name['stateCode']} (outline)", vertices, figure

    def select_outlines(self, limit: int, leave_out: frozenset[str]) -> list[Outline]:
        """The first `limit` county outlines that qualify in OUTLINE_SALT's order."""
        chosen: list[Outline] = []
        for fips in self.candidates(OUTLINE_SALT):
            if len(chosen) >= limit:
                break
            found = None if fips in leave_out else self.outline(fips)
            if found is not None:
                chosen.append((fips, *found))
        return chosen
