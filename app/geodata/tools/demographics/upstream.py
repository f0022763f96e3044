"""get_demographics from the upstream provider: the Census data profiles (DP02-DP05)."""

from __future__ import annotations

from app.geodata.providers.upstream import (
    UpstreamProvider,
)
from app.geodata.tools.demographics import upstream_profiles
from app.geodata.tools.demographics.schemas import DemographicsArgs, DemographicsResult


def answer(upstream: UpstreamProvider, args: DemographicsArgs) -> DemographicsResult:
    return upstream_profiles.demographics(upstream.profiles, upstream.census, args)
