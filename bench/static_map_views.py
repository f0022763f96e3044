"""Reference views of static_map written as PNGs, to look at before and after a change of
the renderer: run it on each checkout into its own directory and compare by eye.

    .venv/bin/python bench/static_map_views.py /tmp/views-after

Arguments the checkout does not know (e.g. `path` before it existed) are dropped, so the
same views render on older code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.geodata.service import execute  # noqa: E402
from app.kit.errors import InvalidArgument  # noqa: E402


def _line(*points: tuple[float, float]) -> list[dict[str, float]]:
    return [{"lat": lat, "lon": lon} for lat, lon in points]


ROAD_TRIP = ((37.77, -122.42), (36.6, -121.9), (35.37, -120.85), (34.42, -119.7), (34.05, -118.24))
VIEWS: dict[str, dict[str, Any]] = {
    "lakes-great-lakes": {"center": {"lat": 44.0, "lon": -84.0}, "zoom": 5},
    "lakes-michigan-z7": {"center": {"lat": 43.5, "lon": -87.0}, "zoom": 7},
    "lakes-geneva": {"center": {"lat": 46.4, "lon": 6.5}, "zoom": 9},
    "lakes-victoria": {"center": {"lat": -1.0, "lon": 33.0}, "zoom": 6},
    "lakes-titicaca": {"center": {"lat": -15.9, "lon": -69.3}, "zoom": 8},
    "lakes-ijsselmeer": {"center": {"lat": 52.7, "lon": 5.3}, "zoom": 8},
    "lakes-great-salt-lake": {"center": {"lat": 41.1, "lon": -112.5}, "zoom": 8},
    "lakes-chicago-z10": {"center": {"lat": 41.9, "lon": -87.6}, "zoom": 10},
    "rivers-mississippi": {"center": {"lat": 38.0, "lon": -90.5}, "zoom": 7},
    "rivers-danube-z9": {"center": {"lat": 47.6, "lon": 19.0}, "zoom": 9},
    "coast-cape-town-z12": {"center": {"lat": -33.92, "lon": 18.42}, "zoom": 12},
    "coast-sf-bay-z12": {"center": {"lat": 37.8, "lon": -122.35}, "zoom": 12},
    "rivers-nile-delta": {"center": {"lat": 30.5, "lon": 31.0}, "zoom": 7},
    "rivers-rhine": {"center": {"lat": 50.5, "lon": 7.5}, "zoom": 7},
    "coast-rome-z12": {"center": {"lat": 41.9, "lon": 12.5}, "zoom": 12},
    "coast-ostia-z12": {"center": {"lat": 41.74, "lon": 12.27}, "zoom": 12},
    "coast-venice-z12": {"center": {"lat": 45.42, "lon": 12.33}, "zoom": 12},
    "coast-oslofjord-z12": {"center": {"lat": 59.89, "lon": 10.70}, "zoom": 12},
    "coast-istanbul-z12": {"center": {"lat": 41.03, "lon": 29.0}, "zoom": 12},
    "coast-norway": {"center": {"lat": 68.5, "lon": 15.0}, "zoom": 8},
    "coast-bay-area": {"center": {"lat": 37.7, "lon": -122.3}, "zoom": 9},
    "borders-benelux": {"center": {"lat": 50.8, "lon": 5.0}, "zoom": 7},
    "borders-world": {"center": {"lat": 20.0, "lon": 0.0}, "zoom": 1, "width": 1024},
    "labels-europe-z4": {"center": {"lat": 50.0, "lon": 10.0}, "zoom": 4},
    "labels-luxembourg": {"center": {"lat": 49.61, "lon": 6.13}, "zoom": 10},
    "path-road-trip": {
        "path": _line(*ROAD_TRIP),
        "markers": [
            {"lat": a, "lon": o, "label": str(i + 1)} for i, (a, o) in enumerate(ROAD_TRIP)
        ],
    },
    "path-outline-wide": {
        "path": _line(
            (40.0, -109.05),
            (41.0, -109.05),
            (41.0, -102.05),
            (37.0, -102.05),
            (37.0, -109.05),
            (40.0, -109.05),
        ),
        "path_color": "#d7263d",
        "path_width": 5,
    },
    "fit-cape-town": {
        "markers": [
            {"lat": -33.9249, "lon": 18.4241, "label": "City Hall"},
            {"lat": -33.9036, "lon": 18.4206, "label": "V&A Waterfront"},
            {"lat": -33.9628, "lon": 18.4098, "label": "Table Mountain"},
        ]
    },
    "fit-close-markers": {
        "markers": [{"lat": 39.7392, "lon": -104.9903}, {"lat": 39.7393, "lon": -104.9904}]
    },
    "fit-bbox-switzerland": {"bbox": {"west": 5.9, "south": 45.8, "east": 10.5, "north": 47.8}},
    "fit-bay-area-airports": {
        "markers": [
            {"lat": 37.619, "lon": -122.375, "label": "SFO"},
            {"lat": 37.721, "lon": -122.221, "label": "OAK"},
            {"lat": 37.363, "lon": -121.929, "label": "SJC"},
        ]
    },
    "antimeridian-fiji-path": {
        "path": _line((-17.6, 177.4), (-18.1, 178.4), (-17.5, -178.8), (-16.5, -179.9)),
        "path_color": "#7b3fa0",
    },
    "antimeridian-bbox": {"bbox": {"west": 170.0, "south": -25.0, "east": -170.0, "north": -10.0}},
    "iceland": {"bbox": {"west": -24.6, "south": 63.2, "east": -13.4, "north": 66.6}},
}


def render(name: str, args: dict[str, Any]) -> bytes:
    try:
        call = execute("static_map", args)
    except InvalidArgument:  # an older checkout: without what it does not know
        known = {k: v for k, v in args.items() if not k.startswith("path")}
        if not known:
            return b""
        call = execute("static_map", known)
    assert call.png is not None, name
    return call.png


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    out = parser.parse_args().directory
    out.mkdir(parents=True, exist_ok=True)
    for name, args in VIEWS.items():
        png = render(name, args)
        if png:
            (out / f"{name}.png").write_bytes(png)
    print(f"{len(VIEWS)} views in {out}")


if __name__ == "__main__":
    main()
