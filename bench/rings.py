"""Ring studies against independent totals: how far off `around` answers run, per region.

Three kinds of cases, each a circle or shape whose true population comes from a source
the method did not use (ZCTA figures are ACS 2018-2022; GeoNames gives place populations):

- islands and small countries (COUNTRY_CASES): a circle covering the whole country or
  territory and no other inhabited land, against the World Bank's 2019 total (as
  shipped by pypopulation);
- US counties (bench/ring_counties.py): a circle holding a whole county, against the
  Census Bureau's July 2019 county estimates, the counties it cuts apportioned by area;
  kept when the cut counties bring at most 15 % of the total, apportioned so and by
  their GeoNames places;
- country outlines (bench/ring_outlines.json, written by bench/ring_outlines.py): a
  `within` polygon of a country small enough for the 100 km reach, against Natural
  Earth's POP_EST (a source apart from the World Bank totals above); the region is the
  country's continent as the answers name it (GeoNames' continent code).

Halves. The first set's cases are "tune" or "check" by a hash of their name; the check
half was the held-out report until issue 54's second round, which looked at it. Since
then both make the tune set, from which the answers' claims are decided, and the
"fresh" set (FRESH_COUNTRY_CASES, county circles drawn by another salt and county
outlines as `within` polygons by a third, leaving the first set's counties out; drawn
after the claims were fixed) is the held-out report.

Claims, per class of answer, from the tune set only: the median |error|, and as bounds
the ceil((n + 1) x c)-th smallest of the n tune errors for c = 0.9 ("9 in 10") and
c = 0.95 ("19 in 20"); split conformal: a new case of the same kind exceeds it at most
1 - c of the time. A class with too few tune cases for a bound claims none. Classes:
answers "mostly apportioned" (rings.mostly_apportioned: most of the count from areas
less than half inside; they claim no range and say why), else the US, else the
continent when it has enough tune cases, else the world outside the US pooled (the
answer says its continent had too few). bench/accuracy.py grades every case against
what its answer claims; "wrong and sure" is a truth outside the widest range claimed.

With `--write`, the cases go into bench/known_answers.json (class "ring") and the tune
set's claims into app/geodata/providers/embedded/ring_error.json, which the answers'
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
from ring_counties import (  # bench/, beside this script
    FRESH_MAX_COUNTY_KM,
    FRESH_SALT,
    CountyCircles,
)

from app.geodata.providers.embedded import ring_answers, rings
from app.geodata.providers.embedded.area_data import tables
from app.geodata.providers.embedded.data import GeoData, load
from app.geodata.tools.population.schemas import PopulationArgs

MAX_COUNTY_CASES = 60
MAX_FRESH_COUNTY_CASES = 45
MAX_FRESH_OUTLINES = 40
COVERAGES = {"p90": 0.9, "p95": 0.95}  # the bounds claimed: 9 in 10, 19 in 20
MIN_CLASS_CASES = 9  # the fewest n with ceil((n + 1) x 0.9) <= n
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
# The fresh set's: every other island country in pypopulation's World Bank table whose
# people fit one circle of at most 100 km with no other country's place inside (checked
# by the answer's places: rings.place_part's countries), looked for in December 2026.
FRESH_COUNTRY_CASES = [
    ("KM", -11.85, 43.9, 95, "AF"),  # Comoros: Ngazidja, Mohéli, Anjouan; Mayotte outside
    ("TC", 21.65, -71.75, 72, "NA"),  # Turks and Caicos: Providenciales to Grand Turk
    ("VC", 12.98, -61.22, 50, "NA"),  # St Vincent and the Grenadines to Union Island
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
    fresh: bool = False  # drawn for the held-out report after the claims were fixed

    @property
    def half(self) -> str:
        if self.fresh:
            return "fresh"
        digest = hashlib.sha256(self.name.encode()).digest()[0]
        return "tune" if digest % 2 == 0 else "check"


def country_cases() -> list[Case]:
    figures = tables().countries
    return [
        Case(f"{code} {figures[code].name}", lat, lon, km, figures[code].population, region)
        for code, lat, lon, km, region in COUNTRY_CASES
    ] + [
        Case(
            f"{code} {figures[code].name}",
            lat,
            lon,
            km,
            figures[code].population,
            region,
            fresh=True,
        )
        for code, lat, lon, km, region in FRESH_COUNTRY_CASES
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


def county_cases(data: GeoData) -> list[Case]:
    """The first set's county circles (tune and check halves) and the fresh set's, drawn
    by another salt and leaving the first set's counties out (bench/ring_counties.py)."""
    counties = CountyCircles(data)
    first = counties.select("", MAX_COUNTY_CASES)
    taken = frozenset(f for f, *_ in first)
    fresh = counties.select(FRESH_SALT, MAX_FRESH_COUNTY_CASES, taken, FRESH_MAX_COUNTY_KM)
    taken |= {f for f, *_ in fresh}
    outlines = counties.select_outlines(MAX_FRESH_OUTLINES, taken)
    return [
        Case(name, lat, lon, radius, truth, "US", fresh=is_fresh)
        for chosen, is_fresh in ((first, False), (fresh, True))
        for _, name, lat, lon, radius, truth in chosen
    ] + [
        Case(name, v[0][1], v[0][0], 0.0, truth, "US", tuple((x, y) for x, y in v), fresh=True)
        for _, name, v, truth in outlines
    ]


def answer(data: GeoData, case: Case) -> tuple[int, bool]:
    """The answer's population and whether it is mostly apportioned (claims no range)."""
    args = PopulationArgs.model_validate(known_answer(case)["args"])
    where = args.around or args.within
    assert where is not None
    flagged = rings.mostly_apportioned(rings.zip_part(data, where), rings.place_part(data, where))
    return ring_answers.population(data, args).population, flagged


def bound(absolute: list[float], coverage: float) -> float | None:
    """The ceil((n + 1) x coverage)-th smallest |error|: a new case of the same kind is
    above it with probability at most 1 - coverage; None when n is too small for one."""
    rank = math.ceil((len(absolute) + 1) * coverage)
    return sorted(absolute)[rank - 1] if rank <= len(absolute) else None


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


TUNE_SET = ("tune", "check")  # the first set's halves, both tune since round two


def by_set(errors: dict[tuple[str, str], list[float]]) -> dict[tuple[str, str], list[float]]:
    """The errors per (set, class): "tune set" (both first halves), "check" (the first
    set's old held-out half, reported apart) and "fresh" (the held-out report)."""
    merged: dict[tuple[str, str], list[float]] = {}
    for (half, where), values in errors.items():
        names = (
            ["tune set", half] if half == "check" else ["tune set" if half in TUNE_SET else half]
        )
        for name in names:
            merged.setdefault((name, where), []).extend(values)
    return merged


def report(data: GeoData, verbose: bool = False, write: bool = False) -> None:
    """Print the error table (and with `verbose`, every case); with `write`, store the
    cases and the tune set's claims (module docstring)."""
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
    print(
        "| set | class | cases | median abs error | 9-in-10 bound | 19-in-20 bound | largest "
        "| median signed |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (half, where), values in sorted(by_set(errors).items()):
        absolute = [abs(v) for v in values]
        limits = [bound(absolute, c) for c in COVERAGES.values()]
        print(
            f"| {half} | {where} | {len(values)} | {statistics.median(absolute):.1f}% | "
            + " | ".join("none (too few)" if x is None else f"{x:.1f}%" for x in limits)
            + f" | {max(absolute):.1f}% | {statistics.median(values):+.1f}% |"
        )
    if write:
        write_cases(cases)
        write_table(by_set(errors))


def known_answer(case: Case) -> dict[str, object]:
    if case.polygon is not None and case.region == "US":
        note = f"{case.name} (Census cartographic boundary; county estimates 2019)"
        args: dict[str, object] = {"within": {"polygon": [list(v) for v in case.polygon]}}
    elif case.polygon is not None:
        note = f"outline of {case.name} (Natural Earth 5.1.1 POP_EST)"
        args = {"within": {"polygon": [list(v) for v in case.polygon]}}
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
    """The tune set's claims per class: median |error|, the 9-in-10 and 19-in-20 bounds
    (None when too few cases) and the largest; a continent with too few for a 9-in-10
    bound is left to "world"."""
    classes = {}
    for (half, where), values in sorted(errors.items()):
        absolute = [abs(v) for v in values]
        limits = {name: bound(absolute, c) for name, c in COVERAGES.items()}
        continent = where not in ("US", "outside the US", APPORTIONED)
        if half != "tune set" or (continent and limits["p90"] is None):
            continue
        classes["world" if where == "outside the US" else where] = {
            "cases": len(values),
            "median": round(statistics.median(absolute), 1),
            **{name: None if x is None else _up(x) for name, x in limits.items()},
            "largest": _up(max(absolute)),
        }
    table = {
        "about": "|error| in % of ring answers on the tune set of bench/rings.py (written by "
        "bench/rings.py --write): p90 and p95 are the ceil((n + 1) x 0.9)-th and "
        "ceil((n + 1) x 0.95)-th smallest, null when n is too small; the answers' warnings "
        "quote them, bench/accuracy.py grades the fresh set",
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
