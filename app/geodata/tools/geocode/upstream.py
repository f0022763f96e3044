"""geocode from the upstream provider: OpenStreetMap Nominatim."""

from __future__ import annotations

from app.geodata.providers.upstream import (
    UpstreamProvider,
    kind_of,
)
from app.geodata.tools.geocode.schemas import GeocodeArgs, GeocodeMatch, GeocodeResult
from app.kit.errors import InvalidArgument, NotFound
from app.upstream import nominatim
from app.upstream.client import UpstreamStatusError


def answer(upstream: UpstreamProvider, args: GeocodeArgs) -> GeocodeResult:
    try:
        places = upstream.nominatim.search(args.query, country=args.country, limit=args.limit)
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
            kind=kind_of(place),
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
