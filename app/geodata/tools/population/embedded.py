"""get_population from the shipped data: a ZIP, an area or a circle."""

from __future__ import annotations

from app.geodata.providers.embedded import EmbeddedProvider, population_income, ring_answers
from app.geodata.tools.population.schemas import PopulationArgs, PopulationResult


def answer(provider: EmbeddedProvider, args: PopulationArgs) -> PopulationResult:
    if args.around is not None or args.within is not None:
        return ring_answers.population(provider.data, args)
    if args.area is not None:
        return population_income.area_population(provider.data, provider.areas, args)
    return population_income.population(provider.data, args)
