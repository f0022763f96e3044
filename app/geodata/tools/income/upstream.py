"""get_average_income from the upstream provider: the Census ACS API."""

from __future__ import annotations

from app.geodata.providers import upstream_areas
from app.geodata.providers.upstream import (
    UpstreamProvider,
    acs_dataset,
    acs_source,
    area_candidates,
    zcta,
)
from app.geodata.tools.income.schemas import IncomeArgs, IncomeResult
from app.kit.errors import NotFound


def answer(upstream: UpstreamProvider, args: IncomeArgs) -> IncomeResult:
    if args.area is not None:
        return _area_income(upstream, args.area)
    assert args.postal_code is not None
    row = zcta(upstream, args.postal_code)
    if row.median_household_income is None:
        raise NotFound(f"No household income estimate for ZIP {args.postal_code}")
    return IncomeResult(
        postal_code=args.postal_code,
        area_id=args.postal_code,
        name=args.postal_code,
        amount=row.median_household_income,
        measure="median_household_income",
        year=row.year,
        period=f"{row.year - 4}-{row.year}",
        source=acs_source(row.year, "B19013"),
        dataset=acs_dataset(row.year, "B19013"),
    )


def _area_income(upstream: UpstreamProvider, text: str) -> IncomeResult:
    found = upstream_areas.estimate(upstream.census, text)
    acs, match = found.acs, found.match
    if acs.median_household_income is None:
        raise NotFound(f"No median household income estimate for {found.name}")
    return IncomeResult(
        level=match.level,
        name=found.name,
        area_id=match.area_id,
        country_code="US",
        amount=acs.median_household_income,
        margin_of_error=acs.income_moe,
        measure="median_household_income",
        year=acs.year,
        period=f"{acs.year - 4}-{acs.year}",
        candidates=area_candidates(match),
        source=acs_source(acs.year, "B19013"),
        dataset=acs_dataset(acs.year, "B19013"),
    )
