"""Overpass API: OpenStreetMap features around a point, by `amenity` tag.

The query asks for nodes, ways and relations within the radius (`around`), with `out
center` so areas come back with a centre point. Distances are computed by us on the sphere.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from app.upstream.client import UpstreamClient

ATTRIBUTION = "© OpenStreetMap contributors (ODbL), via Overpass API"
# OSM tag values are lowercase words with underscores; anything else never reaches a query.
AMENITY_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


@dataclass(frozen=True)
class OsmFeature:
    osm_id: str
    name: str | None
    category: str
    lat: float
    lon: float


def overpass_query(lat: float, lon: float, radius_m: int, amenity: str, limit: int) -> str:
    if not AMENITY_PATTERN.match(amenity):
        raise ValueError(f"not an OSM amenity value: {amenity!r}")
    around = f"(around:{radius_m},{lat:.6f},{lon:.6f})"
    return (
        f'[out:json][timeout:10];(nwr{around}["amenity"="{amenity}"];);'
        f"out center {max(limit * 4, 50)};"
    )


def parse_elements(payload: dict[str, Any], amenity: str) -> list[OsmFeature]:
    features = []
    for element in payload.get("elements", []):
        point = element.get("center") or element
        if "lat" not in point or "lon" not in point:
            continue
        tags = element.get("tags") or {}
        features.append(
            OsmFeature(
                osm_id=f"{element.get('type', 'node')}/{element.get('id')}",
                name=tags.get("name"),
                category=tags.get("amenity", amenity),
                lat=float(point["lat"]),
                lon=float(point["lon"]),
            )
        )
    return features


class OverpassApi:
    def __init__(self, client: UpstreamClient) -> None:
        self.client = client

    def nearby(
        self, lat: float, lon: float, *, radius_m: int, amenity: str, limit: int
    ) -> list[OsmFeature]:
        query = overpass_query(lat, lon, radius_m, amenity, limit)

        def fetch() -> bytes:
            return self.client.request("POST", "/interpreter", data={"data": query}).content

        payload = json.loads(self.client.cached(("overpass", query), fetch))
        return parse_elements(payload, amenity)
