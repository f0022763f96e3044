"""reverse_geocode from the upstream provider: OpenStreetMap Nominatim; in the US the
Census geocoder gives the ZIP, county and state whose polygons hold the point."""

from __future__ import annotations

from app.geodata.geometry import haversine_km
from app.geodata.providers.upstream import (
    UpstreamProvider,
    kind_of,
)
from app.geodata.tools.reverse_geocode.schemas import ReverseGeocodeArgs, ReverseGeocodeResult
from app.geodata.tools.reverse_geocode.us_upstream import us_containment
from app.kit.errors import InvalidArgument, NotFound
from app.upstream import nominatim
from app.upstream.client import UpstreamStatusError


def answer(upstream: UpstreamProvider, args: ReverseGeocodeArgs) -> ReverseGeocodeResult:
    try:
        place = upstream.nominatim.reverse(args.lat, args.lon)
    except UpstreamStatusError as exc:
        raise InvalidArgument(f"The geocoder rejected the point ({exc.status})") from exc
    if place is None:
        raise NotFound(f"No place known near ({args.lat}, {args.lon})")
    result = ReverseGeocodeResult(
        name=place.name,
        label=place.label,
        kind=kind_of(place),
        lat=place.lat,
        lon=place.lon,
        country_code=place.country_code,
        admin1=place.admin1,
        admin2=place.admin2,
        distance_km=round(haversine_km(args.lat, args.lon, place.lat, place.lon), 3),
        source=nominatim.ATTRIBUTION,
        dataset=nominatim.DATASET,
    )
    return us_containment(upstream.census_geocoder, args, result, place.postal_code)
