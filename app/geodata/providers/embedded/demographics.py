"""get_population and get_average_income: lookups by ZIP code in sorted arrays."""

from __future__ import annotations

from app.errors import NotFound
from app.geodata.indices.store import ZIP_KINDS
from app.geodata.providers.embedded import attribution
from app.geodata.providers.embedded.data import GeoData
from app.geodata.schemas import IncomeArgs, IncomeResult, PopulationArgs, PopulationResult

POPULATION_YEAR = 2010


def _row(data: GeoData, code: str) -> int:
    row = data.zip_row(code)
    if row is None:
        raise NotFound(f"ZIP code {code} is not a known US ZIP code")
    return row


def _kind(data: GeoData, row: int) -> str:
    index = int(data.zip_kind[row])
    return ZIP_KINDS[index - 1].lower() if index else "special"


def population(data: GeoData, args: PopulationArgs) -> PopulationResult:
    code = args.postal_code
    row = _row(data, code)
    value = int(data.zip_population[row])
    if value < 0:
        kind = _kind(data, row)
        why = (
            "" if kind == "standard" else f": it is a {kind} ZIP code with no residents of its own"
        )
        raise NotFound(f"No census population is recorded for ZIP code {code}{why}")
    return PopulationResult(
        postal_code=code,
        population=value,
        year=POPULATION_YEAR,
        place_name=data.zip_city[row] or None,
        state=data.zip_state[row] or None,
        county=data.zip_county[row] or None,
        source=attribution.population(data.meta),
    )


# ACS publishes medians above this as '250,000+' (stored as 250001): a lower bound
TOP_CODE = 250_000


def income(data: GeoData, args: IncomeArgs) -> IncomeResult:
    code = args.postal_code
    row = _row(data, code)
    value = int(data.zip_income[row])
    data_source = str(data.income_meta["dataSource"])
    if value < 0:
        raise NotFound(
            f"No median household income estimate for ZIP code {code} in {data_source}: the "
            "Census publishes none for ZIP codes with too few households, and the shipped "
            "table also leaves out medians published only as a top code (250,000+)"
        )
    return IncomeResult(
        postal_code=code,
        amount=min(value, TOP_CODE),
        lower_bound=value >= TOP_CODE,
        measure="median_household_income",
        year=int(data.income_meta["year"]),
        period=attribution.income_period(data_source),
        source=attribution.income(data.meta, data_source),
    )
