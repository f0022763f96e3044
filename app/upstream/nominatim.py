"""Nominatim (OpenStreetMap) geocoding: `/search` and `/reverse` in `jsonv2` format.

Nominatim's usage policy asks for an identifying User-Agent, at most one request per
second on the public instance, and caching; production points at our own instance or a
commercial host of it via Settings. Results are © OpenStreetMap contributors (ODbL).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.upstream.client import UpstreamClient

ATTRIBUTION = "© OpenStreetMap contributors (ODbL), via Nominatim"
DATASET = "osm-nominatim"  # live OpenStreetMap data: no release to name

# Nominatim `addresstype` -> our `kind`.
_KINDS = {
    "country": "country",
    "state": "admin1",
    "province": "admin1",
    "region": "admin1",
    "city": "city",
    "town": "city",
    "village": "city",
    "hamlet": "city",
    "municipality": "city",
    "postcode": "postal_code",
    "road": "address",
    "house": "address",
    "building": "address",
}


@dataclass(frozen=True)
class OsmPlace:
    name: str
    label: str
    lat: float
    lon: float
    kind: str
    country_code: str | None
    admin1: str | None
    admin2: str | None
    postal_code: str | None
    importance: float


def parse_place(item: dict[str, Any]) -> OsmPlace:
    address = item.get("address") or {}
    addresstype = item.get("addresstype") or item.get("type") or ""
    kind = _KINDS.get(addresstype, "poi")
    if address.get("house_number"):
        kind = "address"
    country_code = address.get("country_code")
    return OsmPlace(
        name=item.get("name") or item.get("display_name", "").split(",")[0],
        label=item.get("display_name", ""),
        lat=float(item["lat"]),
        lon=float(item["lon"]),
        kind=kind,
        country_code=country_code.upper() if country_code else None,
        admin1=address.get("state") or address.get("province") or address.get("region"),
        admin2=address.get("county") or address.get("state_district"),
        postal_code=address.get("postcode"),
        importance=float(item.get("importance") or 0.0),
    )


class NominatimApi:
    def __init__(self, client: UpstreamClient) -> None:
        self.client = client

    def search(self, query: str, *, country: str | None, limit: int) -> list[OsmPlace]:
        params: dict[str, Any] = {
            "q": query,
            "format": "jsonv2",
            "addressdetails": 1,
            "limit": limit,
        }
        if country:
            params["countrycodes"] = country.lower()

        def fetch() -> bytes:
            return self.client.get("/search", params).content

        items = json.loads(self.client.cached(("search", query, country, limit), fetch))
        return [parse_place(item) for item in items]

    def reverse(self, lat: float, lon: float) -> OsmPlace | None:
        params = {
            "lat": f"{lat:.6f}",
            "lon": f"{lon:.6f}",
            "format": "jsonv2",
            "addressdetails": 1,
            "zoom": 14,
        }

        def fetch() -> bytes:
            return self.client.get("/reverse", params).content

        item = json.loads(self.client.cached(("reverse", params["lat"], params["lon"]), fetch))
        if not isinstance(item, dict) or "error" in item or "lat" not in item:
            return None
        return parse_place(item)
