"""Ring studies against independent totals: how far off `around` answers run, per region.

Two kinds of cases, each a circle whose true population comes from a source the
method did not use (ZCTA figures are ACS 2018-2022; GeoNames gives place populations):

- islands and small countries (COUNTRY_CASES): a circle covering the whole country or
  territory and no other inhabited land, against the World Bank's 2019 total (as
  shipped by pypopulation);
- US counties: for each county of the Census cartographic boundaries, the circle around
  its box's centre that holds all its boundary points (radius up to MAX_COUNTY_KM); the
  counties wholly inside count in full, each county the circle only cuts by half, and
  the case is kept only when those cut counties hold at most CUT_SHARE of the total (the
  truth is then known within CUT_SHARE / 2); circles reaching non-US places are left
  out. Truth: the Census Bureau's July 2019 county estimates;
- country outlines (bench/ring_outlines.json, written by bench/ring_outlines.py): a
  `within` polygon of a country small enough for the 100 km reach, against Natural
  Earth's POP_EST (a source apart from the World Bank totals above); the region is the
  country's continent as the answers name it (GeoNames' continent code).

Each case is in the "tune" or the "check" half (by a hash of its name). What the answers
claim was decided on "tune" only: per class of answer, the median |error| and, as the
9-in-10 bound, the ceil((n + 1) x 0.9)-th smallest of the n tune errors (split conformal:
a new case of the same kind exceeds it at most 1 time in 10); a class with fewer than
MIN_CLASS_CASES tune cases has no such order statistic, so no finite bound. Classes:
answers "mostly apportioned" (rings.mostly_apportioned: most of the count from areas
less than half inside; they claim no range and say why), else the US, else the
continent when it has MIN_CLASS_CASES tune cases, else the world outside the US pooled
(the answer says its continent had too few). The "check" half is the held-out report
(docs/DATA.md), graded by bench/accuracy.py against those claims.

With `--write`, the cases go into bench/known_answers.json (class "ring") and the tune
half's claims into app/geodata/providers/embedded/ring_error.json, which the answers'
warnings quote.

Run: .venv/bin/python bench/rings.py [--data-dir DIR] [--verbose] [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.geodata.geometry import haversine_km_many
from app.geodata.providers.embedded import ring_answers, rings
from app.geodata.providers.embedded.area_data import tables
from app.geodata.providers.embedded.data import GeoData, load
from app.geodata.schemas import Circle
from app.geodata.tools.population.schemas import PopulationArgs

MAX_COUNTY_KM = 60.0
CUT_SHARE = 0.15
MAX_COUNTY_CASES = 60
GRID = 30
COVERAGE = 0.9
MIN_CLASS_CASES = 9  # the fewest n with ceil((n + 1) x COVERAGE) <= n
APPORTIONED = "mostly apportioned"

ROOT = Path(__file__).resolve().parent.parent
KNOWN_ANSWERS = ROOT / "bench" / "known_answers.json"
OUTLINES = ROOT / "bench" / "ring_outlines.json"
ERROR_TABLE = ROOT / "app" / "geodata" / "providers" / "embedded" / "ring_error.json"

# (country code, lat, lon, radius km, region): the whole country inside, no other land
COUNTRY_CASES = [
    ("MT", 35.92, 14.40, 25, "EU"),
    ("IM", 54.23, -4.55, 30, "EU"),
    ("FO", 62.0, -6.9, 70, "EU"),
    ("AD", 42.55, 1.58, 15, "EU"),
    ("BH", 26.03, 50.55, 30, "AS"),
    ("MU", -20.25, 57.55, 40, "AF"),
    ("SC", -4.55, 55.6, 60, "AF"),
    ("ST", 0.25, 6.6, 30, "AF"),
    ("BB", 13.17, -59.55, 25, "NA"),
    ("LC", 13.9, -60.97, 25, "NA"),
    ("GD", 12.12, -61.68, 45, "NA"),
    ("AG", 17.35, -61.8, 65, "NA"),
    ("KN", 17.25, -62.7, 20, "NA"),
    ("DM", 15.42, -61.35, 30, "NA"),
    ("BM", 32.31, -64.77, 20, "NA"),
    ("KY", 19.32, -81.25, 25, "NA"),
    ("AW", 12.52, -69.97, 20, "NA"),
    ("CW", 12.2, -69.0, 40, "NA"),
    ("WS", -13.75, -172.1, 75, "OC"),
    ("PW", 7.4, 134.55, 40, "OC"),
    ("NR", -0.53, 166.93, 5, "OC"),
    ("GU", 13.45, 144.79, 30, "OC"),
    ("AS", -14.3, -170.7, 20, "OC"),
    ("PR", 18.22, -66.5, 100, "US"),
]


@dataclass(frozen=True)
class Case:
    name: str
    lat: float
    lon: float
    radius_km: float
    truth: float
    region: str
    polygon: tuple[tuple[float, float], ...] | None = None  # `within` instead of `around`

    @property
    def half(self) -> str:
        digest = hashlib.sha256(self.name.encode()).digest()[0]
        return "tune" if digest % 2 == 0 else "check"


def country_cases() -> list[Case]:
    figures = tables().countries
    return [
        Case(f"{code} {figures[code].name}", lat, lon, km, figures[code].population, region)
        for code, lat, lon, km, region in COUNTRY_CASES
    ]


def outline_cases() -> list[Case]:
    """Whole countries as `within` polygons (bench/ring_outlines.py); those already held
    as circles (COUNTRY_CASES) are left out so no country counts twice."""
    circles = {code for code, *_ in COUNTRY_CASES}
    document = json.loads(OUTLINES.read_text(encoding="utf-8"))
    cases = []
    for row in document["cases"]:
        code = row["name"].split()[0]
        if code in circles:
            continue
        polygon = tuple((lon, lat) for lon, lat in row["polygon"])
        lon, lat = polygon[0]
        region = rings._continents().get(code) or row["region"]  # noqa: SLF001
        cases.append(Case(row["name"], lat, lon, 0.0, row["population"], region, polygon))
    return cases


def _area_km2(pts: np.ndarray, offsets: list[tuple[int, int]], lat0: float) -> float:
    """A county's area from its rings (shoelace in a local projection; holes wind the
    other way, so the signed sum leaves them out)."""
    total = 0.0
    kx, ky = 111.32 * np.cos(np.radians(lat0)), 110.57
    for start, stop in offsets:
        x, y = pts[start:stop, 0] * kx, pts[start:stop, 1] * ky
        total += 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    return abs(total)


def county_cases(data: GeoData) -> list[Case]:
    """Circles holding a whole county; the counties they cut count by the share of their
    area inside (a grid of points in the circle, each placed in its county)."""
    arrays = data.counties._arrays  # noqa: SLF001 (the bench reads the index as is)
    rows = data.counties._rows  # noqa: SLF001
    xy = np.asarray(arrays["cty_xy"])
    offsets = np.asarray(arrays["cty_ring_off"]).tolist()
    ring_county = np.asarray(arrays["cty_ring_county"]).tolist()
    rings_of: dict[int, list[tuple[int, int]]] = {}
    for ring, county in enumerate(ring_county):
        rings_of.setdefault(county, []).append((offsets[ring], offsets[ring + 1]))
    fips_row = {r["fips"]: i for i, r in enumerate(rows)}
    estimates = tables().counties
    candidates = sorted(
        (f for f in estimates if f in fips_row),
        key=lambda f: hashlib.sha256(f.encode()).hexdigest(),
    )
    cases = []
    for fips in candidates:
        if len(cases) >= MAX_COUNTY_CASES:
            break
        county = fips_row[fips]
        pts = np.concatenate([xy[a:b] for a, b in rings_of[county]])
        lon = (pts[:, 0].min() + pts[:, 0].max()) / 2
        lat = (pts[:, 1].min() + pts[:, 1].max()) / 2
        radius = float(haversine_km_many(lat, lon, pts[:, 1], pts[:, 0]).max()) + 0.5
        if radius > MAX_COUNTY_KM:
            continue
        dlat = radius / 110.57
        dlon = radius / (111.32 * np.cos(np.radians(lat)))
        step = 2 * radius / GRID
        counts: dict[int, int] = {}
        for glat in np.linspace(lat - dlat, lat + dlat, GRID):
            for glon in np.linspace(lon - dlon, lon + dlon, GRID):
                if haversine_km_many(lat, lon, np.array([glat]), np.array([glon]))[0] > radius:
                    continue
                found = data.counties.at(float(glat), float(glon))
                if found is not None and found.basis == "containment":
                    row = fips_row[found.fips]
                    counts[row] = counts.get(row, 0) + 1
        full = cut = 0.0
        unknown = False
        for row, n in counts.items():
            figure = estimates.get(rows[row]["fips"])
            if figure is None:
                unknown = True
                break
            others = np.concatenate([xy[a:b] for a, b in rings_of[row]])
            if haversine_km_many(lat, lon, others[:, 1], others[:, 0]).max() <= radius:
                full += figure.population
            else:
                share = min(1.0, n * step * step / _area_km2(xy, rings_of[row], lat))
                cut += figure.population * share
        if unknown or full <= 0 or cut > CUT_SHARE * (full + cut):
            continue
        circle = Circle(lat=lat, lon=lon, radius_m=radius * 1000)
        if rings.place_part(data, circle).population > 0:  # Canada or Mexico inside
            continue
        row_name = rows[county]
        cases.append(
            Case(f"{row_name['name']}, {row_name['stateCode']}", lat, lon, radius, full + cut, "US")
        )
    return cases


def answer(data: GeoData, case: Case) -> tuple[int, bool]:
    """The answer's population and whether it is mostly apportioned (claims no range)."""
    args = PopulationArgs.model_validate(known_answer(case)["args"])
    where = args.around or args.within
    assert where is not None
    flagged = rings.mostly_apportioned(rings.zip_part(data, where), rings.place_part(data, where))
    return ring_answers.population(data, args).population, flagged


def bound(absolute: list[float], coverage: float = COVERAGE) -> float | None:
    """The ceil((n + 1) x coverage)-th smallest |error|: a new case of the same kind is
    above it with probability at most 1 - coverage; None when n is too small for one."""
    rank = math.ceil((len(absolute) + 1) * coverage)
    return sorted(absolute)[rank - 1] if rank <= len(absolute) else None


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def report(data: GeoData, verbose: bool = False, write: bool = False) -> None:
    """Print the error table (and with `verbose`, every case); with `write`, store the
    cases and the tune half's claims (module docstring)."""
    cases = country_cases() + outline_cases() + county_cases(data)
    errors: dict[tuple[str, str], list[float]] = {}
    for case in cases:
        got, flagged = answer(data, case)
        error = (got - case.truth) / case.truth * 100
        groups = [APPORTIONED] if flagged else ["US" if case.region == "US" else "outside the US"]
        if case.region != "US" and not flagged:
            groups.append(case.region)
        for group in groups:
            errors.setdefault((case.half, group), []).append(error)
        if verbose:
            print(
                f"{case.half:5} {case.region:3} {case.name:40} "
                + (f"{case.radius_km:6.1f} km " if case.polygon is None else "outline   ")
                + f"truth {case.truth:>10,.0f} got {got:>10,} {error:+6.1f}%"
                + (" (mostly apportioned)" if flagged else "")
            )
    print(f"{len(cases)} ring cases")
    print("| half | class | cases | median abs error | 9-in-10 bound | largest | median signed |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (half, where), values in sorted(errors.items()):
        absolute = [abs(v) for v in values]
        limit = bound(absolute)
        print(
            f"| {half} | {where} | {len(values)} | {statistics.median(absolute):.1f}% | "
            + ("none (too few)" if limit is None else f"{limit:.1f}%")
            + f" | {max(absolute):.1f}% | {statistics.median(values):+.1f}% |"
        )
    if write:
        write_cases(cases)
        write_table(errors)


def known_answer(case: Case) -> dict[str, object]:
    if case.polygon is not None:
        note = f"outline of {case.name} (Natural Earth 5.1.1 POP_EST)"
        args: dict[str, object] = {"within": {"polygon": [list(v) for v in case.polygon]}}
    else:
        source = "Census county estimates 2019" if case.region == "US" else "World Bank 2019"
        note = f"ring around {case.name}, all of it inside ({source})"
        around = {
            "lat": round(case.lat, 5),
            "lon": round(case.lon, 5),
            "radius_m": round(case.radius_km * 1000),
        }
        args = {"around": around}
    return {
        "tool": "get_population",
        "note": note,
        "class": "ring",
        "half": case.half,
        "args": args,
        "expect": {"ring_truth": round(case.truth), "region": case.region},
    }


def write_cases(cases: list[Case]) -> None:
    """Replace the ring cases of bench/known_answers.json with these."""
    document = json.loads(KNOWN_ANSWERS.read_text(encoding="utf-8"))
    kept = [c for c in document["cases"] if c.get("class") != "ring"]
    document["cases"] = kept + [known_answer(case) for case in cases]
    KNOWN_ANSWERS.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")


def _up(value: float) -> float:
    """Rounded up to 0.1: a bound rounded down would put its own case outside it."""
    return math.ceil(value * 10) / 10


def write_table(errors: dict[tuple[str, str], list[float]]) -> None:
    """The tune half's claims per class: median |error|, the 9-in-10 bound (None when
    too few cases) and the largest; a continent with too few is left to "world"."""
    classes = {}
    for (half, where), values in sorted(errors.items()):
        absolute = [abs(v) for v in values]
        limit = bound(absolute)
        continent = where not in ("US", "outside the US", APPORTIONED)
        if half != "tune" or (continent and limit is None):
            continue
        classes["world" if where == "outside the US" else where] = {
            "cases": len(values),
            "median": round(statistics.median(absolute), 1),
            "p90": None if limit is None else _up(limit),
            "largest": _up(max(absolute)),
        }
    table = {
        "about": "|error| in % of ring answers on the tune half of bench/rings.py (written by "
        "bench/rings.py --write): p90 is the ceil((n + 1) x 0.9)-th smallest, null when n is "
        "too small; the answers' warnings quote it, bench/accuracy.py grades the check half",
        "regions": classes,
    }
    ERROR_TABLE.write_text(json.dumps(table, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(".geosvc"))
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--write", action="store_true", help="store the cases and the table")
    options = parser.parse_args()
    report(load(options.data_dir), options.verbose, options.write)


if __name__ == "__main__":
    main()
