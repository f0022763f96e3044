"""get_average_income from the shipped data: a ZIP, an area or a circle."""

from __future__ import annotations

from app.geodata.providers.embedded import EmbeddedProvider, population_income, ring_answers
from app.geodata.tools.income.schemas import IncomeArgs, IncomeResult


def answer(provider: EmbeddedProvider, args: IncomeArgs) -> IncomeResult:
    if args.around is not None or args.within is not None:
        return ring_answers.income(provider.data, args)
    if args.area is not None:
        return population_income.area_income(provider.areas, args)
    return population_income.income(provider.data, args)
