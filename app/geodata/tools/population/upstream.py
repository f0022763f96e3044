"""get_population from the upstream provider: the Census ACS API."""

from __future__ import annotations

from app.geodata.providers import upstream_areas
from app.geodata.providers.upstream import (
    UpstreamProvider,
    acs_dataset,
    acs_source,
    area_candidates,
    zcta,
)
from app.geodata.tools.population.schemas import PopulationArgs, PopulationResult
from app.kit.errors import NotFound


def answer(upstream: UpstreamProvider, args: PopulationArgs) -> PopulationResult:
    if args.area is not None:
        return _area_population(upstream, args.area)
    assert args.postal_code is not None
    row = zcta(upstream, args.postal_code)
    if not row.population:
        raise NotFound(f"No population estimate for ZIP {args.postal_code}")
    return PopulationResult(
        postal_code=args.postal_code,
        area_id=args.postal_code,
        name=args.postal_code,
        population=row.population,
        year=row.year,
        source=acs_source(row.year, "B01003"),
        dataset=acs_dataset(row.year, "B01003"),
    )


def _area_population(upstream: UpstreamProvider, text: str) -> PopulationResult:
    found = upstream_areas.estimate(upstream.census, text)
    acs, match = found.acs, found.match
    if acs.population is None:
        raise NotFound(f"No population estimate for {found.name}")
    return PopulationResult(
        level=match.level,
        name=found.name,
        area_id=match.area_id,
        country_code="US",
        population=acs.population,
        margin_of_error=acs.population_moe,
        year=acs.year,
        state=match.state_code,
        candidates=area_candidates(match),
        source=acs_source(acs.year, "B01003"),
        dataset=acs_dataset(acs.year, "B01003"),
    )
