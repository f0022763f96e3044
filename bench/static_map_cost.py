"""Worker CPU per static_map, before and after the renderer's caches, side by side.

"before" is the renderer as it was (tests/geodata/reference_static_map.py, pinned, with
Pillow's PNG encoder at compress_level=6; since issue 42 it places names with today's
rules, without country names); "after" is today's. To compare two checkouts, run this in
each, one after the other, and compare the "after" columns. Both draw the same views
in the same process, interleaved, and each map's CPU time (time.process_time, so the
other jobs on a busy machine distort it little) is the median of --repeats renders.
Sets of views:

  world 1280x1280      the world at zoom 2 (bench/noisy_neighbour.py's big map)
  600x400, N views     random centres on land and at sea, zooms 2-12 (p50 and p90 over views)
  600x400, coasts      seven coasts at zooms 9-12 (p50 and max)
  1280x1280, N views   the same at the largest size
  run_tool()           the whole task body of the worker (fit, render, result, base64),
                       also for a fit to a 500-point path

    .venv/bin/python bench/static_map_cost.py [--views 30] [--repeats 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.geodata.catalogue import parse  # noqa: E402
from app.geodata.providers.embedded import attribution  # noqa: E402
from app.geodata.rendering.map_image import MapMarker, render  # noqa: E402
from app.geodata.service import provider  # noqa: E402
from app.geodata.tools.static_map.embedded import map_view  # noqa: E402
from app.geodata.tools.static_map.schemas import StaticMapArgs  # noqa: E402
from app.tool_calls.service import run_tool  # noqa: E402
from tests.geodata import reference_static_map as reference  # noqa: E402

WORLD = {"center": {"lat": 0, "lon": 0}, "zoom": 2, "width": 1280, "height": 1280}
# coasts at zooms 9-12, where the detailed shoreline is drawn (Norway's skerries, Venice's
# lagoon, San Francisco Bay, Cape Town, the Oslofjord, Stockholm's archipelago, Istanbul)
COASTS = [
    {"center": {"lat": lat, "lon": lon}, "zoom": zoom, "width": 600, "height": 400}
    for lat, lon in (
        (68.5, 15.0),
        (45.42, 12.33),
        (37.8, -122.35),
        (-33.92, 18.42),
        (59.89, 10.70),
        (59.35, 18.3),
        (41.03, 29.0),
    )
    for zoom in (9, 10, 11, 12)
]


def views(count: int, width: int, height: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {
            "center": {"lat": rng.uniform(-55, 70), "lon": rng.uniform(-180, 180)},
            "zoom": rng.randint(2, 12),
            "width": width,
            "height": height,
        }
        for _ in range(count)
    ]


def cpu_ms(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.process_time()
        run()
        times.append(time.process_time() - started)
    return statistics.median(times) * 1000


def renderers(request: dict[str, Any]) -> tuple[Callable[[], bytes], Callable[[], bytes]]:
    embedded = provider()
    args = parse("static_map", request)
    assert isinstance(args, StaticMapArgs)
    view = map_view(embedded, args)
    names, credit = embedded.place_names, attribution.MAP_ATTRIBUTION
    old_markers = [reference.MapMarker(m.lat, m.lon, m.color, m.label) for m in args.markers]
    new_markers = [MapMarker(m.lat, m.lon, m.color, m.label) for m in args.markers]

    def before() -> bytes:
        return reference.render(old_basemap(), view, old_markers, names, credit)

    def after() -> bytes:
        return render(embedded.basemap, view, new_markers, names, credit, None, embedded.countries)

    return before, after


_old_basemap: reference.Basemap | None = None


def old_basemap() -> reference.Basemap:
    global _old_basemap
    if _old_basemap is None:
        data = provider().data
        features = data.localities.features
        _old_basemap = reference.Basemap(data.basemap, data.lat[features], data.lon[features])
    return _old_basemap


def compare(requests: list[dict[str, Any]], repeats: int) -> tuple[list[float], list[float]]:
    before_ms, after_ms = [], []
    for request in requests:
        before, after = renderers(request)
        before(), after()  # warm: fonts, label extents
        before_ms.append(cpu_ms(before, repeats))
        after_ms.append(cpu_ms(after, repeats))
    return before_ms, after_ms


def row(label: str, before: float, after: float) -> None:
    print(f"  {label:34} {before:8.1f} {after:8.1f} {after / before:7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--views", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    provider(), old_basemap()
    print(f"  {'CPU ms per map (median of runs)':34} {'before':>8} {'after':>8} {'ratio':>7}")
    before, after = compare([WORLD], options.repeats)
    row("world 1280x1280", before[0], after[0])
    for width, height in ((600, 400), (1280, 1280)):
        before, after = compare(views(options.views, width, height, seed=26), options.repeats)
        label = f"{width}x{height}, {options.views} views"
        row(f"{label}: p50", statistics.median(before), statistics.median(after))
        row(f"{label}: p90", *(statistics.quantiles(ms, n=10)[-1] for ms in (before, after)))
    before, after = compare(COASTS, options.repeats)
    label = f"600x400, {len(COASTS)} coasts z9-12"
    row(f"{label}: p50", statistics.median(before), statistics.median(after))
    row(f"{label}: max", max(before), max(after))
    track = [{"lat": 45 + i / 100, "lon": 7 + ((i % 20) - 10) / 50} for i in range(500)]
    for request, label in (
        (WORLD, "world 1280x1280"),
        (views(1, 600, 400, 1)[0], "600x400"),
        ({"path": track}, "600x400, 500-point path"),
    ):
        run_tool("static_map", request)
        ms = cpu_ms(partial(run_tool, "static_map", request), options.repeats)
        print(f"  run_tool() after, {label:18} {ms:8.1f} ms (the worker's whole task body)")


if __name__ == "__main__":
    main()
