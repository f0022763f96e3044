"""search_nearby from the shipped data: places, airports and postal codes."""

from __future__ import annotations

from app.geodata.providers.embedded import EmbeddedProvider, nearest
from app.geodata.tools.search_nearby.schemas import SearchNearbyArgs, SearchNearbyResult


def answer(provider: EmbeddedProvider, args: SearchNearbyArgs) -> SearchNearbyResult:
    return nearest.nearby(provider.data, args)
