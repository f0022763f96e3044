"""Worker CPU of a static_map with a choropleth, as a ratio to the plain static_map of the
same view (issue 53, item 3). Each view is run through geodata.execute (the whole tool:
fit, figures, classes, fills, legend, PNG) with and without its `choropleth`, interleaved,
CPU (time.process_time) the median of --repeats runs, after one warm-up run of each
(the first choropleth of a level loads and simplifies its outlines: reported apart as
"first use").

Second table, the map app's outlines (app.geodata.tools.static_map.outlines, carried in
the MCP result's `_meta`): their size per level for typical views, and the CPU of
building them (outlines.build alone, median of --repeats) as a ratio to the rest of the
choropleth call (the call as served, less the outlines), in the same run.

    .venv/bin/python bench/choropleth.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.geodata.loading import provider  # noqa: E402
from app.geodata.service import configure, execute  # noqa: E402
from app.geodata.tools.static_map import choropleth as layers  # noqa: E402
from app.geodata.tools.static_map import embedded, outlines  # noqa: E402
from app.geodata.tools.static_map.schemas import StaticMapArgs  # noqa: E402

VIEWS: list[tuple[str, dict[str, Any], dict[str, str]]] = [
    (
        "US states, zoom 4",
        {"center": {"lat": 38.5, "lon": -96.0}, "zoom": 4, "width": 800, "height": 500},
        {"measure": "population_density", "level": "state"},
    ),
    (
        "US counties, zoom 4",
        {"center": {"lat": 38.5, "lon": -96.0}, "zoom": 4, "width": 800, "height": 500},
        {"measure": "population_density", "level": "county"},
    ),
    (
        "Texas counties, zoom 6",
        {"center": {"lat": 31.0, "lon": -99.5}, "zoom": 6, "width": 600, "height": 400},
        {"measure": "population", "level": "county"},
    ),
    (
        "Europe countries, zoom 4",
        {"center": {"lat": 52.0, "lon": 12.0}, "zoom": 4, "width": 800, "height": 600},
        {"measure": "population_density", "level": "country"},
    ),
    (
        "world countries, zoom 1",
        {"center": {"lat": 20.0, "lon": 0.0}, "zoom": 1, "width": 512, "height": 400},
        {"measure": "population", "level": "country"},
    ),
    (
        "New York ZIPs, zoom 8",
        {"center": {"lat": 40.9, "lon": -73.9}, "zoom": 8, "width": 800, "height": 600},
        {"measure": "population_density", "level": "zip"},
    ),
    (
        "Austin ZIPs, zoom 10",
        {"center": {"lat": 30.3, "lon": -97.75}, "zoom": 10, "width": 600, "height": 400},
        {"measure": "median_household_income", "level": "zip"},
    ),
]


def cpu_ms(arguments: dict[str, Any]) -> float:
    started = time.process_time()
    execute("static_map", arguments)
    return (time.process_time() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".geosvc")
    options = parser.parse_args()
    configure(options.data_dir)
    execute("static_map", VIEWS[0][1])  # the basemap and fonts loaded, as in a worker
    print(f"{'view':<26} {'first use':>10} {'plain ms':>9} {'choropleth ms':>14} {'ratio':>6}")
    ratios = []
    for name, view, choropleth in VIEWS:
        with_layer = {**view, "choropleth": choropleth}
        first = cpu_ms(with_layer)
        cpu_ms(view)
        plain, layered = [], []
        for _ in range(options.repeats):
            plain.append(cpu_ms(view))
            layered.append(cpu_ms(with_layer))
        p, c = statistics.median(plain), statistics.median(layered)
        ratios.append(c / p)
        print(f"{name:<26} {first:>10.0f} {p:>9.1f} {c:>14.1f} {c / p:>6.2f}")
    print(f"median ratio over the views: {statistics.median(ratios):.2f}")
    app_outlines(options.repeats)


def app_outlines(repeats: int) -> None:
    print()
    print(f"{'view':<26} {'areas':>6} {'KB':>6} {'call ms':>8} {'outlines ms':>12} {'ratio':>6}")
    ratios = []
    for name, view, request in VIEWS:
        arguments = {**view, "choropleth": request}
        args = StaticMapArgs.model_validate(arguments)
        shown = embedded.map_view(provider(), args)
        assert args.choropleth is not None
        built = layers.layer(provider().data, shown, args.choropleth)
        calls, builds = [], []
        for _ in range(repeats):
            calls.append(cpu_ms(arguments))
            started = time.process_time()
            payload = outlines.build(shown, built)
            builds.append((time.process_time() - started) * 1000)
        call, build = statistics.median(calls), statistics.median(builds)
        ratio = build / (call - build)
        ratios.append(ratio)
        size = f"{payload['bytes'] / 1000:.0f}" if payload["bytes"] else "over"
        areas = len(payload.get("names", []))
        print(f"{name:<26} {areas:>6} {size:>6} {call:>8.1f} {build:>12.1f} {ratio:>6.2f}")
    print(f"outlines / rest of the call, median over the views: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
