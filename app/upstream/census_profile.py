"""US Census Bureau ACS 5-year data profiles (tables DP02, DP03, DP04, DP05) over the
Census Data API: `/data/{year}/acs/acs5/profile`, one request per table, with each
estimate's 90% margin of error.

Wire format: a JSON array of rows, the header first (`NAME`, the variables asked, then the
geography's keys); an unknown geography answers 204 with no body. An estimate variable
ends in `E` (a count, median or mean) or `PE` (its percent); its margin ends in `M` or
`PM`. Negative annotation values (-666666666 and friends) stand where no figure is
published; they are handed on as they are, the caller says what they mean.

Variable numbers shift between releases (a row added to a table renumbers the rows after
it: 2023's DP05 added detailed race rows, so Asian alone moved from DP05_0044 to
DP05_0047). The ids are written per release, as listed at
api.census.gov/data/{year}/acs/acs5/profile/variables.html; another release is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from app.kit.errors import NotFound, Unsupported
from app.upstream.census import query
from app.upstream.client import UpstreamClient

TABLES = ("DP02", "DP03", "DP04", "DP05")

# measure name -> estimate variable, for the releases whose ids were checked
_COMMON = {
    "households": "DP02_0001E",
    "average_household_size": "DP02_0016E",
    "share_bachelors_or_higher": "DP02_0068PE",
    "share_employed": "DP03_0004PE",  # employed, percent of the population 16 and over
    "mean_commute_minutes": "DP03_0025E",
    "share_below_poverty_level": "DP03_0128PE",  # all people whose poverty status is known
    "housing_units": "DP04_0001E",
    "share_vacant": "DP04_0003PE",
    "share_owner_occupied": "DP04_0046PE",  # of occupied housing units
    "share_households_without_vehicle": "DP04_0058PE",  # of occupied housing units
    "median_home_value": "DP04_0089E",  # owner-occupied units
    "median_age": "DP05_0018E",
    "share_under_18": "DP05_0019PE",
    "share_65_and_over": "DP05_0024PE",
    "share_white": "DP05_0037PE",  # one race: White alone
    "share_black": "DP05_0038PE",
    "share_american_indian_alaska_native": "DP05_0039PE",
}
VARIABLES: dict[int, dict[str, str]] = {
    2022: {
        **_COMMON,
        "share_asian": "DP05_0044PE",
        "share_pacific_islander": "DP05_0052PE",
        "share_hispanic_any_race": "DP05_0071PE",
    },
    2023: {
        **_COMMON,
        "share_asian": "DP05_0047PE",
        "share_pacific_islander": "DP05_0055PE",
        "share_hispanic_any_race": "DP05_0076PE",
    },
}


def margin_of(variable: str) -> str:
    """DP02_0001E -> DP02_0001M; DP02_0068PE -> DP02_0068PM."""
    return variable[:-1] + "M"


@dataclass(frozen=True)
class ProfileFigure:
    estimate: float | None  # None: not in the answer (null); negative: an annotation value
    margin: float | None


@dataclass(frozen=True)
class AcsProfile:
    name: str  # the Census's NAME: "ZCTA5 94103", "Travis County, Texas"
    year: int
    tables: tuple[str, ...]
    figures: dict[str, ProfileFigure]  # by measure name


def variables_for(year: int) -> dict[str, str]:
    known = VARIABLES.get(year)
    if known is None:
        releases = ", ".join(str(y) for y in VARIABLES)
        raise Unsupported(
            f"The ACS {year} data profiles' variable ids are not known to this service "
            f"(known: {releases}); set GEOSVC_CENSUS_YEAR to one of them"
        )
    return known


def _number(value: object) -> float | None:
    if value is None or value in ("", "null"):
        return None
    try:
        return float(str(value))
    except ValueError:
        return None


def parse_profile_rows(
    where: str, wanted: dict[str, str], rows: list[list[str | None]]
) -> tuple[str, dict[str, ProfileFigure]]:
    """NAME and the figures of `wanted` (measure name -> variable) in one table's answer."""
    if len(rows) < 2:
        raise NotFound(f"No ACS data profile for {where}")
    record = dict(zip(rows[0], rows[1], strict=False))
    figures = {
        measure: ProfileFigure(
            estimate=_number(record.get(variable)), margin=_number(record.get(margin_of(variable)))
        )
        for measure, variable in wanted.items()
    }
    return str(record.get("NAME") or where), figures


class CensusProfileApi:
    def __init__(self, client: UpstreamClient, *, year: int, api_key: str | None = None) -> None:
        self.client = client
        self.year = year
        self.api_key = api_key

    def _table(self, geo_for: str, geo_in: str | None, get: str) -> bytes:
        path = f"/{self.year}/acs/acs5/profile"
        return query(self.client, path, get, geo_for, geo_in, self.api_key)

    def profile(self, measures: list[str], geo_for: str, geo_in: str | None = None) -> AcsProfile:
        """`measures`' figures for `for=<geo_for>&in=<geo_in>`: one request per table
        they come from, each asking for all of that table's measures (one cached answer
        serves every `topics` choice)."""
        known = variables_for(self.year)
        tables = tuple(t for t in TABLES if any(known[m].startswith(t) for m in measures))
        name = geo_for
        figures: dict[str, ProfileFigure] = {}
        for table in tables:
            wanted = {m: v for m, v in known.items() if v.startswith(table)}
            get = ",".join(["NAME", *(x for v in wanted.values() for x in (v, margin_of(v)))])
            body = self._table(geo_for, geo_in, get)
            name, found = parse_profile_rows(geo_for, wanted, json.loads(body))
            figures.update(found)
        return AcsProfile(
            name=name,
            year=self.year,
            tables=tables,
            figures={m: figures[m] for m in measures},
        )
