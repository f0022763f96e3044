"""get_demographics from the shipped data: a ZIP or a circle."""

from __future__ import annotations

from app.geodata.providers.embedded import EmbeddedProvider, profiles
from app.geodata.tools.demographics import ring_profiles
from app.geodata.tools.demographics.schemas import DemographicsArgs, DemographicsResult


def answer(provider: EmbeddedProvider, args: DemographicsArgs) -> DemographicsResult:
    if args.around is not None or args.within is not None:
        return ring_profiles.demographics(provider.data, args)
    return profiles.demographics(provider.data, args)
