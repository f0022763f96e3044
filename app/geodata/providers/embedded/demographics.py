"""get_population and get_average_income: lookups by ZIP code in sorted arrays."""

from __future__ import annotations

from app.errors import NotFound
from app.geodata.indices.store import ZIP_KINDS
from app.geodata.providers.embedded import attribution
from app.geodata.providers.embedded.data import GeoData
from app.geodata.results import IncomeResult, PopulationResult
from app.geodata.schemas import IncomeArgs, PopulationArgs


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
    vintage = data.population_vintages[int(data.zip_population_vintage[row])]
    if value < 0:
        kind = _kind(data, row)
        why = (
            "" if kind == "standard" else f": it is a {kind} ZIP code with no residents of its own"
        )
        raise NotFound(f"No census population is recorded for ZIP code {code}{why}")
    return PopulationResult(
        postal_code=code,
        population=value,
        year=int(vintage["year"]),
        place_name=data.zip_city[row] or None,
        state=data.zip_state[row] or None,
        county=data.zip_county[row] or None,
        source=attribution.zip_figure(vintage),
        dataset=attribution.zip_dataset(data.meta, vintage),
    )


# ACS publishes medians above this as '250,000+' (stored as 250001): a lower bound
TOP_CODE = 250_000


def income(data: GeoData, args: IncomeArgs) -> IncomeResult:
    code = args.postal_code
    row = _row(data, code)
    value = int(data.zip_income[row])
    newest = data.income_vintages[0]
    if value < 0:
        raise NotFound(
            f"No median household income estimate for ZIP code {code} in "
            f"{newest['dataSource']} nor in earlier vintages: the Census publishes none for "
            "ZIP codes with too few households"
        )
    vintage = data.income_vintages[int(data.zip_income_vintage[row])]
    source = attribution.zip_figure(vintage)
    if vintage is not newest:
        # median-income leaves out ZIPs whose newest median is top-coded (250,000+)
        newer = attribution.income_period(str(newest["dataSource"]))
        source += f"; the newer {newer} survey has no figure for this ZIP code"
    return IncomeResult(
        postal_code=code,
        amount=min(value, TOP_CODE),
        lower_bound=value >= TOP_CODE,
        measure="median_household_income",
        year=int(vintage["year"]),
        period=attribution.income_period(str(vintage["dataSource"])),
        source=source,
        dataset=attribution.zip_dataset(data.meta, vintage),
    )
