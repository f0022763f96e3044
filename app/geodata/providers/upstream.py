"""The upstream provider: the production path over HTTP (Nominatim, Overpass, Census ACS
and its data profiles).

Selected per tool by `GEOSVC_UPSTREAM_TOOLS`. The adapters in `app.upstream` speak the
wire formats (timeouts, tenacity retries, Redis answer cache); this class holds their
clients, and each tool's `upstream` module (`app.geodata.tools.<tool>.upstream`) turns
their answers into its result. Each provider gets the etiquette from Settings: a
User-Agent with `GEOSVC_UPSTREAM_CONTACT`, a rate limiter and a circuit breaker shared by
all processes through Redis. An outage surfaces as `UpstreamUnavailable` (0 credits).
"""

from __future__ import annotations

from typing import cast

from app.geodata.providers.embedded.areas import AreaMatch
from app.geodata.results import Kind, area_candidate
from app.kit.breaker import CircuitBreaker
from app.kit.config import Settings
from app.kit.errors import NotFound
from app.kit.redis_client import sync_redis, sync_redis_bytes
from app.upstream.census import AcsZcta, CensusAcsApi
from app.upstream.census_geocoder import CensusGeocoderApi
from app.upstream.census_profile import CensusProfileApi
from app.upstream.client import RetryPolicy, UpstreamClient, UpstreamStatusError, user_agent
from app.upstream.nominatim import NominatimApi, OsmPlace
from app.upstream.overpass import OverpassApi
from app.upstream.ratelimit import RateLimiter


def acs_source(year: int, table: str) -> str:
    return (
        f"U.S. Census Bureau, ACS 5-year {year - 4}-{year}, table {table}, via the Census Data API"
    )


def acs_dataset(year: int, table: str) -> str:
    return f"census-acs5@{year}/{table}"


def area_candidates(match: AreaMatch) -> list[dict[str, str]]:
    return [area_candidate(c.level, c.name, c.area_id) for c in match.candidates]


def kind_of(place: OsmPlace) -> Kind:
    # `app.upstream.nominatim` maps OSM address types onto exactly these kinds.
    return cast(Kind, place.kind)


class UpstreamProvider:
    def __init__(self, settings: Settings) -> None:
        policy = RetryPolicy(attempts=settings.upstream_attempts)
        cache = sync_redis_bytes()
        shared = sync_redis()
        prefix = settings.redis_key_prefix
        agent = user_agent(settings.upstream_contact, settings.base_url)

        def client(name: str, url: str, rate_per_s: float) -> UpstreamClient:
            limiter = (
                RateLimiter(
                    name,
                    rate_per_s,
                    client=shared,
                    key_prefix=prefix,
                    max_wait_s=settings.upstream_rate_wait_s,
                )
                if rate_per_s > 0
                else None
            )
            breaker = CircuitBreaker(
                name,
                client=shared,
                key_prefix=prefix,
                failure_threshold=settings.upstream_breaker_failures,
                cooldown_s=settings.upstream_breaker_cooldown_s,
                probe_lease_s=settings.upstream_timeout_s * settings.upstream_attempts + 5,
            )
            return UpstreamClient(
                name,
                url,
                timeout_s=settings.upstream_timeout_s,
                policy=policy,
                cache=cache,
                cache_prefix=prefix,
                user_agent_header=agent,
                limiter=limiter,
                breaker=breaker,
                max_connections=max(100, settings.tools_concurrency),
            )

        api_key = settings.census_api_key.get_secret_value() if settings.census_api_key else None
        census = client("census", settings.census_url, settings.census_rate_per_s)
        self.census = CensusAcsApi(census, year=settings.census_year, api_key=api_key)
        # the data profiles share the census client: one rate limit, one breaker
        self.profiles = CensusProfileApi(census, year=settings.census_year, api_key=api_key)
        self.nominatim = NominatimApi(
            client("nominatim", settings.nominatim_url, settings.nominatim_rate_per_s)
        )
        self.overpass = OverpassApi(
            client("overpass", settings.overpass_url, settings.overpass_rate_per_s)
        )
        self.census_geocoder = CensusGeocoderApi(
            client(
                "census-geocoder",
                settings.census_geocoder_url,
                settings.census_geocoder_rate_per_s,
            )
        )


def zcta(upstream: UpstreamProvider, postal_code: str) -> AcsZcta:
    """A ZIP's ACS row; a ZIP the Census API does not know is NOT_FOUND."""
    try:
        return upstream.census.zcta(postal_code)
    except UpstreamStatusError as exc:
        raise NotFound(f"No ACS estimates for ZIP {postal_code}") from exc
