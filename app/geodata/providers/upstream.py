"""The upstream provider: the production path over HTTP (Nominatim, Overpass, Census ACS
and its data profiles).

Selected per tool by `GEOSVC_UPSTREAM_TOOLS`. The adapters in `app.upstream` speak the
wire formats (timeouts, tenacity retries, Redis answer cache); this class turns their
answers into the tools' results. Each provider gets the etiquette from Settings: a
User-Agent with `GEOSVC_UPSTREAM_CONTACT`, a rate limiter and a circuit breaker shared by
all processes through Redis. An outage surfaces as `UpstreamUnavailable` (0 credits).
"""

from __future__ import annotations

from typing import cast

from app.breaker import CircuitBreaker
from app.config import Settings
from app.errors import InvalidArgument, NotFound
from app.geodata.geometry import haversine_km
from app.geodata.paging import cursor_at, offset_of, past_the_last_page
from app.geodata.providers import upstream_areas
from app.geodata.providers.embedded.areas import AreaMatch
from app.geodata.results import Kind, area_candidate
from app.geodata.tools.demographics import upstream_profiles
from app.geodata.tools.demographics.schemas import DemographicsArgs, DemographicsResult
from app.geodata.tools.geocode.schemas import GeocodeArgs, GeocodeMatch, GeocodeResult
from app.geodata.tools.income.schemas import IncomeArgs, IncomeResult
from app.geodata.tools.population.schemas import PopulationArgs, PopulationResult
from app.geodata.tools.reverse_geocode.schemas import ReverseGeocodeArgs, ReverseGeocodeResult
from app.geodata.tools.reverse_geocode.us_upstream import us_containment
from app.geodata.tools.search_nearby.schemas import (
    NearbyPlace,
    SearchNearbyArgs,
    SearchNearbyResult,
)
from app.redis_client import sync_redis, sync_redis_bytes
from app.upstream import nominatim, overpass
from app.upstream.census import AcsZcta, CensusAcsApi
from app.upstream.census_geocoder import CensusGeocoderApi
from app.upstream.census_profile import CensusProfileApi
from app.upstream.client import RetryPolicy, UpstreamClient, UpstreamStatusError, user_agent
from app.upstream.nominatim import NominatimApi, OsmPlace
from app.upstream.overpass import OverpassApi
from app.upstream.ratelimit import RateLimiter


def _acs_source(year: int, table: str) -> str:
    return (
        f"U.S. Census Bureau, ACS 5-year {year - 4}-{year}, table {table}, via the Census Data API"
    )


def _acs_dataset(year: int, table: str) -> str:
    return f"census-acs5@{year}/{table}"


def _candidates(match: AreaMatch) -> list[dict[str, str]]:
    return [area_candidate(c.level, c.name, c.area_id) for c in match.candidates]


def _kind(place: OsmPlace) -> Kind:
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

    def _zcta(self, postal_code: str) -> AcsZcta:
        try:
            return self.census.zcta(postal_code)
        except UpstreamStatusError as exc:
            raise NotFound(f"No ACS estimates for ZIP {postal_code}") from exc

    def get_population(self, args: PopulationArgs) -> PopulationResult:
        if args.area is not None:
            return self._area_population(args.area)
        assert args.postal_code is not None
        row = self._zcta(args.postal_code)
        if not row.population:
            raise NotFound(f"No population estimate for ZIP {args.postal_code}")
        return PopulationResult(
            postal_code=args.postal_code,
            area_id=args.postal_code,
            name=args.postal_code,
            population=row.population,
            year=row.year,
            source=_acs_source(row.year, "B01003"),
            dataset=_acs_dataset(row.year, "B01003"),
        )

    def get_average_income(self, args: IncomeArgs) -> IncomeResult:
        if args.area is not None:
            return self._area_income(args.area)
        assert args.postal_code is not None
        row = self._zcta(args.postal_code)
        if row.median_household_income is None:
            raise NotFound(f"No household income estimate for ZIP {args.postal_code}")
        return IncomeResult(
            postal_code=args.postal_code,
            area_id=args.postal_code,
            name=args.postal_code,
            amount=row.median_household_income,
            measure="median_household_income",
            year=row.year,
            period=f"{row.year - 4}-{row.year}",
            source=_acs_source(row.year, "B19013"),
            dataset=_acs_dataset(row.year, "B19013"),
        )

    def _area_population(self, text: str) -> PopulationResult:
        found = upstream_areas.estimate(self.census, text)
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
            candidates=_candidates(match),
            source=_acs_source(acs.year, "B01003"),
            dataset=_acs_dataset(acs.year, "B01003"),
        )

    def _area_income(self, text: str) -> IncomeResult:
        found = upstream_areas.estimate(self.census, text)
        acs, match = found.acs, found.match
        if acs.median_household_income is None:
            raise NotFound(f"No median household income estimate for {found.name}")
        return IncomeResult(
            level=match.level,
            name=found.name,
            area_id=match.area_id,
            country_code="US",
            amount=acs.median_household_income,
            margin_of_error=acs.income_moe,
            measure="median_household_income",
            year=acs.year,
            period=f"{acs.year - 4}-{acs.year}",
            candidates=_candidates(match),
            source=_acs_source(acs.year, "B19013"),
            dataset=_acs_dataset(acs.year, "B19013"),
        )

    def get_demographics(self, args: DemographicsArgs) -> DemographicsResult:
        return upstream_profiles.demographics(self.profiles, self.census, args)

    def geocode(self, args: GeocodeArgs) -> GeocodeResult:
        try:
            places = self.nominatim.search(args.query, country=args.country, limit=args.limit)
        except UpstreamStatusError as exc:
            raise InvalidArgument(f"The geocoder rejected the query ({exc.status})") from exc
        if not places:
            raise NotFound(f"No place matches {args.query!r}")
        matches = [
            GeocodeMatch(
                name=place.name,
                label=place.label,
                lat=place.lat,
                lon=place.lon,
                kind=_kind(place),
                country_code=place.country_code,
                admin1=place.admin1,
                postal_code=place.postal_code,
                confidence=round(min(1.0, max(0.0, place.importance)), 3),
            )
            for place in places
        ]
        return GeocodeResult(
            query=args.query,
            results=matches,
            source=nominatim.ATTRIBUTION,
            dataset=nominatim.DATASET,
        )

    def reverse_geocode(self, args: ReverseGeocodeArgs) -> ReverseGeocodeResult:
        try:
            place = self.nominatim.reverse(args.lat, args.lon)
        except UpstreamStatusError as exc:
            raise InvalidArgument(f"The geocoder rejected the point ({exc.status})") from exc
        if place is None:
            raise NotFound(f"No place known near ({args.lat}, {args.lon})")
        result = ReverseGeocodeResult(
            name=place.name,
            label=place.label,
            kind=_kind(place),
            lat=place.lat,
            lon=place.lon,
            country_code=place.country_code,
            admin1=place.admin1,
            admin2=place.admin2,
            distance_km=round(haversine_km(args.lat, args.lon, place.lat, place.lon), 3),
            source=nominatim.ATTRIBUTION,
            dataset=nominatim.DATASET,
        )
        return us_containment(self.census_geocoder, args, result, place.postal_code)

    def search_nearby(self, args: SearchNearbyArgs) -> SearchNearbyResult:
        if args.category not in overpass.CATEGORY_TAGS:
            raise InvalidArgument(
                f"Unknown category {args.category!r}; categories: "
                + ", ".join(overpass.CATEGORY_TAGS)
            )
        offset = offset_of(args.cursor)
        try:
            # One more than the page: whether another page follows.
            answer = self.overpass.nearby(
                args.lat,
                args.lon,
                radius_m=round(args.radius_m),
                category=args.category,
                limit=offset + args.limit + 1,
            )
        except UpstreamStatusError as exc:
            raise InvalidArgument(f"The place search rejected the query ({exc.status})") from exc
        ranked = sorted(
            ((haversine_km(args.lat, args.lon, f.lat, f.lon) * 1000, f) for f in answer.features),
            key=lambda pair: pair[0],
        )
        in_range = [
            NearbyPlace(
                name=feature.name or feature.category,
                category=feature.category,
                lat=feature.lat,
                lon=feature.lon,
                distance_m=round(distance_m, 1),
                code=feature.osm_id,
            )
            for distance_m, feature in ranked
            if distance_m <= args.radius_m
        ]
        places = in_range[offset : offset + args.limit]
        more = len(in_range) > offset + args.limit
        if not places and in_range:
            raise past_the_last_page(args.category, len(in_range))
        if not places:
            raise NotFound(
                f"No {args.category} within {args.radius_m:g} m of ({args.lat}, {args.lon})"
            )
        return SearchNearbyResult(
            category=args.category,
            radius_m=args.radius_m,
            results=places,
            # Overpass stopped at its element cap: how many are in range is unknown.
            total=None if answer.truncated else len(in_range),
            truncated=more or answer.truncated,
            next_cursor=cursor_at(offset + args.limit) if more else None,
            source=overpass.ATTRIBUTION,
            dataset=overpass.DATASET,
        )
