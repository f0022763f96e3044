"""The indices in memory: arrays (memory-mapped), KD-trees over unit vectors, small tables."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from app.geodata.geometry import EARTH_RADIUS_KM, unit_vectors
from app.geodata.indices import store
from app.geodata.indices.build import build
from app.geodata.indices.nearest_grid import BASE_REACH_KM, inhabited_countries, reach_km
from app.geodata.indices.store import (
    AIRPORT_TYPES,
    KIND_ADMIN1,
    KIND_AIRPORT,
    KIND_COUNTRY,
    KIND_POSTAL,
    StringTable,
)
from app.geodata.providers.embedded.borders import BorderRefiner
from app.geodata.providers.embedded.counties import CountyIndex
from app.geodata.providers.embedded.prominence import airport_prominence
from app.geodata.providers.embedded.regions import RegionIndex

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PointSet:
    """A subset of features with a KD-tree over their unit vectors."""

    features: npt.NDArray[np.int32]
    tree: cKDTree

    @classmethod
    def of(cls, features: npt.NDArray[np.int32], lat: Any, lon: Any) -> PointSet:
        features = np.asarray(features, dtype=np.int32)
        xyz = unit_vectors(lat[features], lon[features])
        return cls(features=features, tree=cKDTree(xyz, balanced_tree=False, compact_nodes=False))


def reach_chord(population: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """A place's reach plus BASE_REACH_KM, as a chord of the unit sphere."""
    return np.asarray((reach_km(population) + BASE_REACH_KM) / EARTH_RADIUS_KM)


def _view(array: npt.NDArray[Any]) -> memoryview:
    return np.ascontiguousarray(array).data


@dataclass(frozen=True)
class WaterGrid:
    """water_grid.py's arrays: land, lake or sea at a point."""

    cell: npt.NDArray[np.uint8]
    off: npt.NDArray[np.int32]
    edge: npt.NDArray[np.float32]  # (n, 4)
    edge_class: npt.NDArray[np.uint8]


@dataclass(frozen=True)
class FastViews:
    grid_off: memoryview
    grid_cand: memoryview
    grid_sub: memoryview  # per cell with a long list: its first sub-cell (reverse_build)
    sub_off: memoryview
    sub_cand: memoryview
    # GENERAL cells' places per country (country_lists.py): key cell * KEY_STRIDE + country
    cl_key: memoryview
    cl_off: memoryview
    cl_cand: memoryview
    country: memoryview  # per locality (position in the grid's lists)
    grid_filter: memoryview  # per cell: the country its list was narrowed to (nearest_grid)
    xyz: memoryview  # locality unit vectors, flat: x0, y0, z0, x1, ...
    features: memoryview
    lat: memoryview
    lon: memoryview
    # per locality: 1 / reach², the reach being how far its size carries (chord units,
    # plus BASE_REACH_KM); squared chord x this orders places as chord / reach does
    inverse_reach_sq: memoryview
    cc_cell: memoryview
    cc_off: memoryview
    cc_edge: memoryview
    cc_edge_country: memoryview
    cc_border: memoryview  # per cell: 1 where two countries meet
    inhabited: memoryview  # per country: 1 when it has a place to name (Antarctica has none)


class GeoData:
    def __init__(self, raw: store.RawIndex) -> None:
        a = raw.arrays
        self.meta = raw.meta
        # plain ndarray views of the memory maps (no copy): indexing one element of an
        # np.memmap goes through Python code, ten times slower, on every geocode match
        self.kind = np.asarray(a["f_kind"])
        self.lat = np.asarray(a["f_lat"])
        self.lon = np.asarray(a["f_lon"])
        self.population = np.asarray(a["f_population"])
        self.country = np.asarray(a["f_country"])
        self.admin1 = np.asarray(a["f_admin1"])
        self.admin2 = np.asarray(a["f_admin2"])
        self.names = StringTable.from_arrays(a, "f_name")
        self.codes = StringTable.from_arrays(a, "f_code")
        self.admin2_names = StringTable.from_arrays(a, "admin2")
        self.key_hash = np.asarray(a["key_hash"])
        self.key_feature = np.asarray(a["key_feature"])
        self.key_quality = np.asarray(a["key_quality"])
        self.zip_code = a["zip_code"]
        self.zip_population = a["zip_population"]
        self.zip_population_vintage = a["zip_population_vintage"]
        self.zip_income = a["zip_income"]
        self.zip_income_vintage = a["zip_income_vintage"]
        self.zip_kind = a["zip_kind"]
        self.zip_land_km2 = a["zip_land_km2"]
        self.zip_bounds = a["zip_bounds"]
        self.zip_feature = a["zip_feature"]
        self.zip_city = StringTable.from_arrays(a, "zip_city")
        self.zip_state = StringTable.from_arrays(a, "zip_state")
        self.zip_county = StringTable.from_arrays(a, "zip_county")
        self.countries: list[dict[str, Any]] = raw.tables["countries"]
        self.admin1_rows: list[dict[str, Any]] = raw.tables["admin1"]
        # year, dataSource and package of each vintage the ZIP figures come from
        self.income_vintages: list[dict[str, Any]] = raw.tables["income_vintages"]
        self.population_vintages: list[dict[str, Any]] = raw.tables["population_vintages"]
        self.country_by_code = {row["code"]: i for i, row in enumerate(self.countries)}
        self.localities = PointSet.of(a["reverse_features"], self.lat, self.lon)
        self.locality_xyz = self.localities.tree.data
        self.grid_off = a["grid_off"]
        self.grid_cand = np.asarray(a["grid_cand"])
        self.sub_cand = np.asarray(a["sub_cand"])
        self.cl_cand = np.asarray(a["cl_cand"])
        # memoryviews hand out Python numbers several times faster than numpy indexing,
        # which matters on the single-query path of reverse_geocode
        locality_population = np.asarray(self.population)[self.localities.features]
        self.inverse_reach_sq = reach_chord(locality_population) ** -2.0
        self.locality_country = np.asarray(self.country)[self.localities.features].astype(np.int32)
        self.fast = FastViews(
            grid_off=_view(self.grid_off),
            grid_cand=_view(self.grid_cand),
            grid_filter=_view(a["grid_filter"]),
            grid_sub=_view(a["grid_sub"]),
            sub_off=_view(a["sub_off"]),
            sub_cand=_view(self.sub_cand),
            cl_key=_view(a["cl_key"]),
            cl_off=_view(a["cl_off"]),
            cl_cand=_view(self.cl_cand),
            country=_view(self.locality_country),
            xyz=_view(np.ravel(self.locality_xyz)),
            features=_view(self.localities.features),
            lat=_view(self.lat),
            lon=_view(self.lon),
            inverse_reach_sq=_view(self.inverse_reach_sq),
            cc_cell=_view(a["cc_cell"]),
            cc_off=_view(a["cc_off"]),
            cc_edge=_view(np.ravel(a["cc_edge"])),
            cc_edge_country=_view(a["cc_edge_country"]),
            cc_border=_view(a["cc_border"]),
            inhabited=_view(
                inhabited_countries(self.locality_country, len(self.countries)).astype(np.int8)
            ),
        )
        self.borders = BorderRefiner(raw.tables["borderZones"])
        self.admin1_by_geonames = {row["geonames"]: i for i, row in enumerate(self.admin1_rows)}
        self.counties = CountyIndex(
            {k: v for k, v in a.items() if k.startswith("cty_")}, raw.tables.get("usCounties", [])
        )
        self.regions = RegionIndex({k: v for k, v in a.items() if k.startswith("a1_")})
        self.postal = PointSet.of(a["postal_features"], self.lat, self.lon)
        # postal codes outside the US (postal_build.py): found by code and through a grid
        self.postal_first: int = raw.tables["postal"]["first"]
        self.postal_countries: dict[str, int] = raw.tables["postal"]["countries"]
        self.postal_place = StringTable.from_arrays(a, "postal_place")
        self.postal_key = np.asarray(a["postal_key"])
        self.postal_key_feature = np.asarray(a["postal_key_feature"])
        self.postal_cell = np.asarray(a["postal_cell"])
        self.postal_cell_off = np.asarray(a["postal_cell_off"])
        self.postal_cell_feature = np.asarray(a["postal_cell_feature"])
        # per foreign code: how many codes of its country sit on its very point
        self.postal_shared = np.asarray(a["postal_shared"])
        # spelling_build.py: own names with a letter left out, for geocode's typos
        self.spell_key = np.asarray(a["spell_key"])
        self.spell_feature = np.asarray(a["spell_feature"])
        self.airports = PointSet.of(a["airport_features"], self.lat, self.lon)
        # per airport, in the order of airports.features (ascending feature ids)
        self.airport_type = np.asarray(a["airport_type"])
        self.airport_scheduled = np.asarray(a["airport_scheduled"])
        self.airport_prominence = airport_prominence(self.airport_type, self.airport_scheduled)
        self.basemap = {k: np.asarray(v) for k, v in a.items() if k.startswith("bm_")}
        self.water = WaterGrid(
            np.asarray(a["wg_cell"]),
            np.asarray(a["wg_off"]),
            np.asarray(a["wg_edge"]),
            np.asarray(a["wg_edge_class"]),
        )

    # -- naming -------------------------------------------------------------------------------

    def country_code(self, feature: int) -> str | None:
        index = int(self.country[feature])
        return self.countries[index]["code"] if index >= 0 else None

    def country_name(self, feature: int) -> str | None:
        index = int(self.country[feature])
        return self.countries[index]["name"] if index >= 0 else None

    def admin1_name(self, feature: int) -> str | None:
        index = int(self.admin1[feature])
        return self.admin1_rows[index]["name"] if index >= 0 else None

    def admin1_code(self, feature: int) -> str | None:
        index = int(self.admin1[feature])
        return (self.admin1_rows[index]["code"] or None) if index >= 0 else None

    def admin2_name(self, feature: int) -> str | None:
        index = int(self.admin2[feature])
        return self.admin2_names[index] if index >= 0 else None

    def label(self, feature: int) -> str:
        """'Austin, Texas, US'; ZIPs read '78701, Austin, TX, US' as on an envelope, other
        postal codes '10115, Berlin, Berlin, DE' (code, place, admin1, country)."""
        kind = int(self.kind[feature])
        name = self.names[feature]
        country = self.country_code(feature)
        if kind == KIND_COUNTRY:
            return name
        if kind == KIND_POSTAL and feature >= self.postal_first:
            place = self.postal_place[feature - self.postal_first]
            parts = [name, place, self.admin1_name(feature), country]
        elif kind == KIND_POSTAL:
            parts = [name, self.zip_place(name), self.zip_state_code(name), country]
        elif kind == KIND_AIRPORT:
            code = self.codes[feature]
            parts = [f"{name} ({code})" if code else name, country]
        elif kind == KIND_ADMIN1:
            parts = [name, country]
        else:
            parts = [name, self.admin1_name(feature), country]
        return ", ".join(p for p in parts if p)

    # -- airports -----------------------------------------------------------------------------

    def airport_class(self, feature: int) -> tuple[str | None, bool | None]:
        """(OurAirports class, scheduled airline service) of an airport feature; None
        where not known."""
        features = self.airports.features
        row = int(np.searchsorted(features, feature))
        if row >= len(features) or int(features[row]) != feature:
            return None, None
        return self.airport_class_at(row)

    def airport_prominence_of(self, feature: int) -> int:
        """prominence.airport_prominence of an airport feature (that of a small airport
        when its class is not known)."""
        features = self.airports.features
        row = int(np.searchsorted(features, feature))
        if row >= len(features) or int(features[row]) != feature:
            return 4
        return int(self.airport_prominence[row])

    def airport_class_at(self, row: int) -> tuple[str | None, bool | None]:
        scheduled = int(self.airport_scheduled[row])
        return AIRPORT_TYPES[int(self.airport_type[row])] or None, (
            None if scheduled < 0 else bool(scheduled)
        )

    # -- ZIP codes ----------------------------------------------------------------------------

    @cached_property
    def zip_row_of_feature(self) -> npt.NDArray[np.int32]:
        """Feature id -> its row in the ZIP tables (-1: not a ZIP); ~1 ms, on first use."""
        rows = np.full(len(self.lat), -1, dtype=np.int32)
        rows[np.asarray(self.zip_feature)] = np.arange(len(self.zip_feature), dtype=np.int32)
        return rows

    def zip_row(self, code: str) -> int | None:
        value = int(code)
        row = int(np.searchsorted(self.zip_code, value))
        if row < len(self.zip_code) and int(self.zip_code[row]) == value:
            return row
        return None

    def zip_place(self, code: str) -> str | None:
        row = self.zip_row(code)
        return (self.zip_city[row] or None) if row is not None else None

    def zip_state_code(self, code: str) -> str | None:
        row = self.zip_row(code)
        return (self.zip_state[row] or None) if row is not None else None

    # -- names --------------------------------------------------------------------------------

    def lookup_key(self, key: int) -> list[tuple[int, int]]:
        """(feature, quality) pairs whose normalised name hashes to `key`."""
        keys = self.key_hash
        target = np.uint64(key)
        lo = int(np.searchsorted(keys, target, side="left"))
        hi = int(np.searchsorted(keys, target, side="right"))
        features: list[int] = self.key_feature[lo:hi].tolist()
        qualities: list[int] = self.key_quality[lo:hi].tolist()
        return list(zip(features, qualities, strict=True))


def load(data_dir: Path) -> GeoData:
    """Read the indices, building them first when missing or stale."""
    directory = store.index_dir(data_dir)
    if not store.is_current(directory):
        with store.build_lock(data_dir):
            if not store.is_current(directory):
                logger.info("building geodata indices in %s", directory)
                build(data_dir)
    started = time.monotonic()
    data = GeoData(store.read_index(directory))
    logger.info("geodata indices loaded in %.2f s", time.monotonic() - started)
    return data
