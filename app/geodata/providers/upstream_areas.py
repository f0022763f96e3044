"""Population and median household income of a named US area from the Census ACS API:
the nation, a state, a county or a place (a city), newest vintage, with margins of error;
`geography` is the same reading for the demographic profile
(`app.geodata.tools.demographics.upstream_profiles`).

The name is resolved offline (`app.geodata.areas.resolve_area`, the same reading the
embedded answer uses); the Census then answers for its FIPS codes. A city is matched to
the Census place of the same name in its state ('Austin city, Texas'); a city with no
Census place of that name is NOT_FOUND, never a neighbouring figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.geodata.areas import resolve_area
from app.geodata.providers.embedded.areas import AreaMatch
from app.geodata.text import normalize
from app.kit.errors import NotFound, Unsupported
from app.upstream import census
from app.upstream.census import AcsArea, CensusAcsApi
from app.upstream.client import UpstreamStatusError

UPSTREAM_COVERAGE = "the US, US states, counties, places (cities) and ZIP codes"
# the kinds of Census place, as the last word of a place's NAME before the state
_PLACE_KINDS = ("city", "town", "village", "borough", "municipality", "cdp", "city and borough")


@dataclass(frozen=True)
class AreaEstimate:
    match: AreaMatch
    name: str
    acs: AcsArea


def _place_code(api: CensusAcsApi, match: AreaMatch) -> str:
    assert match.state_fips is not None
    wanted = normalize(match.city or "")
    for code, name in census.places(api, match.state_fips):
        place = normalize(name.split(",")[0])
        for kind in _PLACE_KINDS:
            if place == f"{wanted} {kind}":
                return code
    raise NotFound(f"The Census has no place named {match.city!r} in {match.state_code}")


@dataclass(frozen=True)
class AreaGeography:
    """The area a name means, as the Census API's `for` (and `in`) asks for it."""

    match: AreaMatch
    geo_for: str
    geo_in: str | None


def geography(api: CensusAcsApi, text: str) -> AreaGeography:
    match = resolve_area(text)
    if match.country_code != "US" or (match.level == "city" and match.state_fips is None):
        raise Unsupported(
            f"{text!r} is {match.level} {match.name}: the upstream Census ACS covers "
            f"{UPSTREAM_COVERAGE} only"
        )
    if match.level == "country":
        geo_for, geo_in = "us:1", None
    elif match.level == "state":
        geo_for, geo_in = f"state:{match.state_fips}", None
    elif match.level == "county":
        geo_for, geo_in = f"county:{match.county_fips}", f"state:{match.state_fips}"
    else:
        try:
            geo_for = f"place:{_place_code(api, match)}"
        except UpstreamStatusError as exc:
            raise NotFound(f"No Census places listed for {match.state_code}") from exc
        geo_in = f"state:{match.state_fips}"
    return AreaGeography(match=match, geo_for=geo_for, geo_in=geo_in)


def estimate(api: CensusAcsApi, text: str) -> AreaEstimate:
    where = geography(api, text)
    try:
        acs = census.area(api, where.geo_for, where.geo_in)
    except UpstreamStatusError as exc:
        raise NotFound(f"No ACS estimates for {where.match.name}") from exc
    return AreaEstimate(match=where.match, name=acs.name, acs=acs)
