"""reverse_geocode from the shipped data: borders, regions and the nearest places."""

from __future__ import annotations

from app.geodata.providers.embedded import EmbeddedProvider, nearest
from app.geodata.tools.reverse_geocode.schemas import ReverseGeocodeArgs, ReverseGeocodeResult


def answer(provider: EmbeddedProvider, args: ReverseGeocodeArgs) -> ReverseGeocodeResult:
    return nearest.reverse(provider.data, args)
