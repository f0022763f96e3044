"""Overpass API: OpenStreetMap features of one category around a point.

Each of our `search_nearby` categories is a union of OSM tags (`CATEGORY_TAGS`). The query
asks for nodes, ways and relations within the radius (`around`), with `out center` so
areas come back with a centre point, and at most `element_cap(limit)` elements: getting
exactly that many means there may be more (`truncated`). Distances are computed by us.

Overpass reports some failures inside an HTTP 200: a `remark` such as "runtime error:
Query timed out" (the elements are then partial) or an HTML/XML error page instead of
JSON. `check_answer` turns those into retryable failures, so they are never cached and
count towards the breaker.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from app.upstream.client import UpstreamAnswerError, UpstreamClient

ATTRIBUTION = "© OpenStreetMap contributors (ODbL), via Overpass API"
DATASET = "osm-overpass"  # live OpenStreetMap data: no release to name

# Our category -> the OSM (key, value) pairs that make a feature one of it.
CATEGORY_TAGS: dict[str, tuple[tuple[str, str], ...]] = {
    "city": (("place", "city"), ("place", "town")),
    "airport": (("aeroway", "aerodrome"),),
    "postal_code": (("boundary", "postal_code"),),
    "hospital": (("amenity", "hospital"),),
    "pharmacy": (("amenity", "pharmacy"),),
    "school": (("amenity", "school"),),
    "cafe": (("amenity", "cafe"),),
    "restaurant": (("amenity", "restaurant"),),
    "hotel": (("tourism", "hotel"),),
    "fuel": (("amenity", "fuel"),),
    "parking": (("amenity", "parking"),),
    "police": (("amenity", "police"),),
    "supermarket": (("shop", "supermarket"),),
}

_FAILURE_REMARKS = ("runtime error", "query timed out", "out of memory")


@dataclass(frozen=True)
class OsmFeature:
    osm_id: str
    name: str | None
    category: str
    lat: float
    lon: float


@dataclass(frozen=True)
class OverpassAnswer:
    features: list[OsmFeature]
    # Overpass stopped at the element cap: more features may lie within the radius.
    truncated: bool


def element_cap(limit: int) -> int:
    return max(limit * 4, 50)


def overpass_query(lat: float, lon: float, radius_m: int, category: str, limit: int) -> str:
    tags = CATEGORY_TAGS.get(category)
    if tags is None:
        raise ValueError(f"not a search_nearby category: {category!r}")
    around = f"(around:{radius_m},{lat:.6f},{lon:.6f})"
    selectors = "".join(f'nwr{around}["{key}"="{value}"];' for key, value in tags)
    return f"[out:json][timeout:10];({selectors});out center {element_cap(limit)};"


def check_answer(response: httpx.Response) -> None:
    """Raise UpstreamAnswerError for an Overpass failure delivered with status 200."""
    body = response.content.lstrip()
    if not body.startswith(b"{"):
        # Overpass's error pages are HTML (or XML for [out:xml]), even with [out:json].
        raise UpstreamAnswerError(f"overpass answered a non-JSON page: {body[:120]!r}")
    try:
        payload = json.loads(body)
    except ValueError as exc:
        raise UpstreamAnswerError("overpass answered malformed JSON") from exc
    remark = str(payload.get("remark") or "") if isinstance(payload, dict) else ""
    if any(marker in remark.lower() for marker in _FAILURE_REMARKS):
        raise UpstreamAnswerError(f"overpass: {remark[:200]}")


def parse_elements(payload: dict[str, Any], category: str) -> list[OsmFeature]:
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
                category=category,
                lat=float(point["lat"]),
                lon=float(point["lon"]),
            )
        )
    return features


class OverpassApi:
    def __init__(self, client: UpstreamClient) -> None:
        self.client = client

    def nearby(
        self, lat: float, lon: float, *, radius_m: int, category: str, limit: int
    ) -> OverpassAnswer:
        query = overpass_query(lat, lon, radius_m, category, limit)

        def fetch() -> bytes:
            return self.client.request(
                "POST", "/interpreter", data={"data": query}, check=check_answer
            ).content

        payload = json.loads(self.client.cached(("overpass", query), fetch))
        elements = payload.get("elements", [])
        return OverpassAnswer(
            features=parse_elements(payload, category),
            truncated=len(elements) >= element_cap(limit),
        )
