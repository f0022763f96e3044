"""get_population and get_average_income: lookups by ZIP code in sorted arrays."""

from __future__ import annotations

from app.geodata.indices.store import ZIP_KINDS
from app.geodata.providers.embedded import attribution
from app.geodata.providers.embedded.areas import AreaMatch, AreaResolver
from app.geodata.providers.embedded.data import GeoData
from app.geodata.results import area_candidate
from app.geodata.tools.income.schemas import IncomeArgs, IncomeResult
from app.geodata.tools.population.schemas import PopulationArgs, PopulationResult
from app.kit.errors import NotFound, Unsupported


def _row(data: GeoData, code: str | None) -> int:
    assert code is not None  # the arguments give a postal_code or an area
    row = data.zip_row(code)
    if row is None:
        raise NotFound(f"ZIP code {code} is not a known US ZIP code")
    return row


ISLAND_AREAS = {
    "GU": "Guam",
    "AS": "American Samoa",
    "MP": "the Northern Mariana Islands",
    "VI": "the U.S. Virgin Islands",
}


def island_area(data: GeoData, row: int, code: str) -> str | None:
    """Why a ZIP code of an Island Area has no figure here (not its size: the ACS does
    not survey them, and the ZCTA counts shipped come from it), or None."""
    area = ISLAND_AREAS.get(data.zip_state[row])
    if area is None:
        return None
    return (
        f"ZIP code {code} is in {area}: the American Community Survey, where these figures "
        "come from, does not cover the Island Areas (Guam, American Samoa, the Northern "
        "Mariana Islands, the U.S. Virgin Islands); the Census counts them in its separate "
        "Island Areas census, not shipped here"
    )


def _kind(data: GeoData, row: int) -> str:
    index = int(data.zip_kind[row])
    return ZIP_KINDS[index - 1].lower() if index else "special"


def population(data: GeoData, args: PopulationArgs) -> PopulationResult:
    code = args.postal_code
    row = _row(data, code)
    value = int(data.zip_population[row])
    vintage = data.population_vintages[int(data.zip_population_vintage[row])]
    if value < 0:
        if (why_not := island_area(data, row, code or "")) is not None:
            raise NotFound(why_not)
        kind = _kind(data, row)
        why = (
            "" if kind == "standard" else f": it is a {kind} ZIP code with no residents of its own"
        )
        raise NotFound(f"No census population is recorded for ZIP code {code}{why}")
    return PopulationResult(
        postal_code=code,
        area_id=code,
        name=code,
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
        if (why_not := island_area(data, row, code or "")) is not None:
            raise NotFound(why_not)
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
        area_id=code,
        name=code,
        amount=min(value, TOP_CODE),
        lower_bound=value >= TOP_CODE,
        measure="median_household_income",
        year=int(vintage["year"]),
        period=attribution.income_period(str(vintage["dataSource"])),
        source=source,
        dataset=attribution.zip_dataset(data.meta, vintage),
    )


# What answers an area's figures offline, and what needs the upstream provider.
OFFLINE_INCOME = "US ZIP codes"
UPSTREAM_INCOME = (
    "US states, counties and places need the upstream Census ACS provider "
    "(GEOSVC_TOOL_PROVIDERS get_average_income=embedded-then-upstream)"
)


def candidates(match: AreaMatch) -> list[dict[str, str]]:
    return [area_candidate(c.level, c.name, c.area_id) for c in match.candidates]


def area_population(
    data: GeoData, resolver: AreaResolver, args: PopulationArgs
) -> PopulationResult:
    assert args.area is not None
    match = resolver.resolve(args.area)
    if match.population is None:
        raise NotFound(f"No population figure is shipped for {match.name} ({match.level})")
    return PopulationResult(
        postal_code=None,
        level=match.level,
        name=match.name,
        area_id=match.area_id,
        country_code=match.country_code,
        population=match.population,
        year=match.year,
        state=match.state_code,
        candidates=candidates(match),
        source=match.source,
        dataset=attribution.area_dataset(data.meta, match.level, match.from_gazetteer),
    )


def area_income(resolver: AreaResolver, args: IncomeArgs) -> IncomeResult:
    assert args.area is not None
    match = resolver.resolve(args.area)
    raise Unsupported(
        f"{args.area!r} is {match.level} {match.name}: no income figure for it is shipped "
        f"offline (offline: {OFFLINE_INCOME}; {UPSTREAM_INCOME}; countries and cities "
        "outside the US are not covered)"
    )
