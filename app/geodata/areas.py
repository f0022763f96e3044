"""Area resolution for tools that answer for a named area (population, income, and the
demographic profile): `resolve_area("Travis County, Texas")` -> `AreaMatch`.

The resolver lives with the embedded data it reads
(`app.geodata.providers.embedded.areas`); this is its entry point for any provider or
tool, loading the embedded indices on first use like every other call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.geodata.loading import loaded_provider, provider
from app.upstream.client import CacheMiss, answering_from_cache_only

if TYPE_CHECKING:
    from app.geodata.providers.embedded.areas import AreaMatch


def resolve_area(text: str) -> AreaMatch:
    """The area `text` names: a US state, a US county (with its suffix, or its FIPS code),
    a country or a city; the most populous reading, its namesakes in `candidates`.
    Raises NotFound (nothing matches) or InvalidArgument (blank); CacheMiss when only
    cached answers may be used and this process has not loaded the indices: the api
    answers cache hits on its event loop, and loading them there (seconds) would stall
    every call the process holds."""
    loaded = loaded_provider()
    if loaded is None and answering_from_cache_only():
        raise CacheMiss("resolving an area needs the embedded indices")
    return (loaded or provider()).resolve_area(text)
