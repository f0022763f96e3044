"""US Census Bureau ACS 5-year API: population and income by ZCTA (ZIP Code Tabulation Area).

Wire format: a JSON array of rows whose first row is the header; an unknown ZCTA answers
204 with no body. Negative sentinels (-666666666 and friends) mean "no estimate".
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from app.kit.errors import NotFound
from app.upstream.client import UpstreamClient

POPULATION = "B01003_001E"  # total population
MEDIAN_HOUSEHOLD_INCOME = "B19013_001E"
PER_CAPITA_INCOME = "B19301_001E"
AGGREGATE_HOUSEHOLD_INCOME = "B19025_001E"
HOUSEHOLDS = "B11001_001E"
VARIABLES = (
    POPULATION,
    MEDIAN_HOUSEHOLD_INCOME,
    PER_CAPITA_INCOME,
    AGGREGATE_HOUSEHOLD_INCOME,
    HOUSEHOLDS,
)


@dataclass(frozen=True)
class AcsZcta:
    zcta: str
    year: int
    population: int | None
    median_household_income: int | None
    per_capita_income: int | None
    mean_household_income: int | None


def _estimate(value: str | None) -> int | None:
    if value is None or value in ("", "null"):
        return None
    number = int(float(value))
    return number if number >= 0 else None


def parse_acs_rows(zcta: str, year: int, rows: list[list[str]]) -> AcsZcta:
    if len(rows) < 2:
        raise NotFound(f"No ACS {year} estimates for ZIP {zcta}")
    record = dict(zip(rows[0], rows[1], strict=False))
    aggregate = _estimate(record.get(AGGREGATE_HOUSEHOLD_INCOME))
    households = _estimate(record.get(HOUSEHOLDS))
    mean = round(aggregate / households) if aggregate is not None and households else None
    return AcsZcta(
        zcta=zcta,
        year=year,
        population=_estimate(record.get(POPULATION)),
        median_household_income=_estimate(record.get(MEDIAN_HOUSEHOLD_INCOME)),
        per_capita_income=_estimate(record.get(PER_CAPITA_INCOME)),
        mean_household_income=mean,
    )


class CensusAcsApi:
    def __init__(self, client: UpstreamClient, *, year: int, api_key: str | None = None) -> None:
        self.client = client
        self.year = year
        self.api_key = api_key

    def zcta(self, zcta: str) -> AcsZcta:
        params = {"get": ",".join(("NAME", *VARIABLES)), "for": f"zip code tabulation area:{zcta}"}
        if self.api_key:
            params["key"] = self.api_key

        def fetch() -> bytes:
            response = self.client.get(f"/{self.year}/acs/acs5", params)
            return b"[]" if response.status_code == 204 else response.content

        body = self.client.cached(("acs5", self.year, zcta), fetch)
        return parse_acs_rows(zcta, self.year, json.loads(body))


# --- larger areas: the nation, states, counties and places, with margins of error ---------

POPULATION_MOE = "B01003_001M"
MEDIAN_HOUSEHOLD_INCOME_MOE = "B19013_001M"
AREA_VARIABLES = (
    "NAME",
    POPULATION,
    POPULATION_MOE,
    MEDIAN_HOUSEHOLD_INCOME,
    MEDIAN_HOUSEHOLD_INCOME_MOE,
)


@dataclass(frozen=True)
class AcsArea:
    """One geography's estimates; None where the Census publishes none (its annotation
    values such as -666666666: too few cases; -555555555: no margin, controlled)."""

    name: str
    year: int
    population: int | None
    population_moe: int | None
    median_household_income: int | None
    income_moe: int | None


def parse_area_rows(where: str, year: int, rows: list[list[str]]) -> AcsArea:
    if len(rows) < 2:
        raise NotFound(f"No ACS {year} estimates for {where}")
    record = dict(zip(rows[0], rows[1], strict=False))
    return AcsArea(
        name=str(record.get("NAME") or where),
        year=year,
        population=_estimate(record.get(POPULATION)),
        population_moe=_estimate(record.get(POPULATION_MOE)),
        median_household_income=_estimate(record.get(MEDIAN_HOUSEHOLD_INCOME)),
        income_moe=_estimate(record.get(MEDIAN_HOUSEHOLD_INCOME_MOE)),
    )


def query(
    client: UpstreamClient,
    path: str,
    get: str,
    geo_for: str,
    geo_in: str | None,
    api_key: str | None,
) -> bytes:
    """The Census API's answer to `get` for a geography (`for`, `in`), through the cache;
    `[]` where it answers 204 (no such geography)."""
    params = {"get": get, "for": geo_for}
    if geo_in:
        params["in"] = geo_in
    if api_key:
        params["key"] = api_key

    def fetch() -> bytes:
        response = client.get(path, params)
        return b"[]" if response.status_code == 204 else response.content

    return client.cached((path, get, geo_for, geo_in or ""), fetch)


def _geography(api: CensusAcsApi, geo_for: str, geo_in: str | None, get: str) -> bytes:
    return query(api.client, f"/{api.year}/acs/acs5", get, geo_for, geo_in, api.api_key)


def area(api: CensusAcsApi, geo_for: str, geo_in: str | None = None) -> AcsArea:
    """Estimates for `for=<geo_for>&in=<geo_in>`, e.g. ("county:453", "state:48")."""
    body = _geography(api, geo_for, geo_in, ",".join(AREA_VARIABLES))
    return parse_area_rows(geo_for, api.year, json.loads(body))


def places(api: CensusAcsApi, state_fips: str) -> list[tuple[str, str]]:
    """(place code, NAME) of every Census place in a state: 'Austin city, Texas'."""
    body = _geography(api, "place:*", f"state:{state_fips}", "NAME")
    rows = json.loads(body)
    if len(rows) < 2:
        return []
    header = rows[0]
    name, code = header.index("NAME"), header.index("place")
    return [(str(row[code]), str(row[name])) for row in rows[1:]]
