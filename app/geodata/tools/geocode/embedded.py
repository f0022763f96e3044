"""geocode from the shipped data: the embedded geocoder."""

from __future__ import annotations

from app.geodata.providers.embedded import EmbeddedProvider
from app.geodata.tools.geocode.schemas import GeocodeArgs, GeocodeResult


def answer(provider: EmbeddedProvider, args: GeocodeArgs) -> GeocodeResult:
    return provider.geocoder.geocode(args)
