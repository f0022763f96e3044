"""search_nearby from the upstream provider: OpenStreetMap Overpass."""

from __future__ import annotations

from app.geodata.geometry import haversine_km
from app.geodata.paging import cursor_at, offset_of, past_the_last_page
from app.geodata.providers.upstream import (
    UpstreamProvider,
)
from app.geodata.tools.search_nearby.schemas import (
    NearbyPlace,
    SearchNearbyArgs,
    SearchNearbyResult,
)
from app.kit.errors import InvalidArgument, NotFound
from app.upstream import overpass
from app.upstream.client import UpstreamStatusError


def answer(upstream: UpstreamProvider, args: SearchNearbyArgs) -> SearchNearbyResult:
    if args.category not in overpass.CATEGORY_TAGS:
        raise InvalidArgument(
            f"Unknown category {args.category!r}; categories: " + ", ".join(overpass.CATEGORY_TAGS)
        )
    offset = offset_of(args.cursor)
    try:
        # One more than the page: whether another page follows.
        answer = upstream.overpass.nearby(
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
        raise NotFound(f"No {args.category} within {args.radius_m:g} m of ({args.lat}, {args.lon})")
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
