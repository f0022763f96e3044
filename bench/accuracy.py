"""Accuracy on a known-answer set: world facts (bench/known_answers.json), not our output.

Runs every case through `app.geodata.service` (the embedded provider unless the tool
provider settings say otherwise) and prints, per tool and per class of case, how many
hold. Besides plain facts (`near`, `name`, figures), a case may expect:
- `containing_zip`: the US ZIP code the point lies in. It holds when `postalCode` is that
  ZIP, or when the answer claims none (`nearestPostalCode` says it is only the nearest
  centre); a wrong `postalCode` fails. How often the nearest centre is the containing ZIP
  is printed too.
- `zip_among_candidates`: the US ZIP code the point lies in is `postalCode` answered by
  containment, or one of `postalCodeCandidates` (the nearest ZIP centres) when the answer
  says `postalCodeBasis` "estimate" or "nearest_centre"; a wrong containment claim fails.
  Every ZIP case (this and `containing_zip`) is also scored as "right first" (the first
  candidate or `postalCode` is the ZIP), "right among candidates, flagged uncertain",
  "wrong and sure" (the first is another ZIP and `postalCodeUncertain` is not true) or
  "wrong, flagged uncertain", and how many right first were not flagged; per `half` of
  the case ("tune": the half the rule's thresholds were chosen on, "check": the other;
  earlier cases have none).
- `admin2`, `county_fips`, `label_contains` (reverse_geocode): the county (by name and
  5-digit FIPS) and a text the label must hold (the state of the place named).
- `exists` (search_nearby): there is one in range; NOT_FOUND fails (it says there is
  none), UNSUPPORTED holds (it says the deployment cannot tell).
- `honest_near` (geocode of a landmark or address): the top result is that close, or
  the answer is UNSUPPORTED or carries a warning; a town presented as the place fails.
- `detail` (static_map): the image shows more than a blank canvas (at least 2 % of its
  pixels differ from the dominant colour), or the zoom is refused as INVALID_ARGUMENT.
- `error_code` (+ `message_contains`): that refusal, saying that.
- `level` (get_population, get_average_income of an `area`): the level of area the
  answer says it matched (state, county, country, city): a ZIP's or a city's figure
  presented for a larger area fails.
- `on_water` (reverse_geocode): whether the point is on a lake or the sea; on water the
  answer must say the place is only the nearest (`nearestOnly`), never "In" it.
- `nearest_only` (reverse_geocode): the point is in no town (Antarctica): the place
  named must be flagged as the nearest only.
- `min_zoom` (static_map): a fit reaches at least this zoom; `warns`: the answer carries
  a warning (e.g. the world drawn once at zoom 0).
- `ambiguous` (geocode): whether the name fits several well-known places far apart; with
  `candidates_include`, the [country, admin1] of places that must be among `candidates`.
- `postal_positions` (search_nearby, reverse_geocode): {code: [lat, lon]}, where those
  postal codes really are, and `km`: each of them answered must be that close to the
  distance it claims (`distanceM`), or say that its point is only its town's
  (`positionPrecision` "city", or a warning naming it); a code claimed "169 m" away that
  is kilometres off fails.

- `ring_truth` (get_population `around` a circle, class "ring"): the circle's true
  residents from a source the method did not use (bench/rings.py writes these cases).
  Each answer's warnings claim how far off such answers run ("off by M% (median) and up
  to P% (9 in 10)"), or say the error is not measured there and why ("Error not
  measured": no range claimed); the case holds unless the truth is outside a claimed
  P% range, which is "wrong and sure". Graded per `half` ("tune": the claimed figures
  and the method's knobs come from it; "check": held out) as within M%, within P%,
  wrong and sure, or no range claimed.

With `--rings`, also the ring studies' error table per region: bench/rings.py.

Run: .venv/bin/python bench/accuracy.py [--data-dir DIR] [--verbose] [--rings]
"""

from __future__ import annotations

import argparse
import io
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.geodata import service  # noqa: E402
from app.kit.errors import AppError  # noqa: E402

CASES = Path(__file__).with_name("known_answers.json")


def _km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0088 * math.asin(math.sqrt(h))


def _name_ok(found: dict[str, Any], names: list[str]) -> bool:
    return found.get("name") in names


def _check_place(found: dict[str, Any], expect: dict[str, Any]) -> str | None:
    if "country_code" in expect and found.get("countryCode") != expect["country_code"]:
        return f"country {found.get('countryCode')}"
    if "name" in expect and not _name_ok(found, expect["name"]):
        return f"name {found.get('name')!r}"
    if "admin1" in expect and found.get("admin1") not in expect["admin1"]:
        return f"admin1 {found.get('admin1')!r}"
    if "admin2" in expect and found.get("admin2") not in expect["admin2"]:
        return f"admin2 {found.get('admin2')!r}"
    if "county_fips" in expect and found.get("countyFips") != expect["county_fips"]:
        return f"countyFips {found.get('countyFips')!r}"
    if "label_contains" in expect and expect["label_contains"] not in found.get("label", ""):
        return f"label {found.get('label')!r}"
    if "kind" in expect and found.get("kind") not in expect["kind"]:
        return f"kind {found.get('kind')}"
    if "near" in expect:
        lat, lon, km = expect["near"]
        distance = _km(lat, lon, found["lat"], found["lon"])
        if distance > km:
            return f"{distance:.1f} km away ({found.get('name')!r})"
    limit = expect.get("max_confidence_if_city")
    if limit is not None and found.get("kind") == "city" and found["confidence"] >= limit:
        return f"town {found.get('name')!r} with confidence {found['confidence']}"
    return None


def _detail(png: bytes | None) -> str | None:
    from PIL import Image

    if not png:
        return "no image"
    image = Image.open(io.BytesIO(png)).convert("RGB")
    dominant = max(count for count, _colour in image.getcolors(1 << 24) or [])
    share = 1 - dominant / (image.width * image.height)
    return None if share >= 0.02 else f"blank canvas: {100 * share:.2f} % of pixels drawn"


def _colours(result: dict[str, Any], expect: dict[str, Any]) -> str | None:
    """Whether the map is water (the ocean's colour) at each point of `water_at` and land
    at each of `land_at`: some pixel within 2 of the point's (a place name's halo may
    cover one)."""
    from PIL import Image

    from app.geodata.rendering.map_image import LAND, OCEAN

    if not ("water_at" in expect or "land_at" in expect):
        return None
    image = Image.open(io.BytesIO(result["png"])).convert("RGB")
    scale = 256 * 2 ** result["zoom"]

    def world(lat: float, lon: float) -> tuple[float, float]:
        s = math.sin(math.radians(lat))
        return (lon + 180) / 360, 0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)

    cx, cy = world(result["center"]["lat"], result["center"]["lon"])
    for key, colour in (("water_at", OCEAN), ("land_at", LAND)):
        for lat, lon in expect.get(key, []):
            x, y = world(lat, lon)
            px = round((x - cx) * scale + result["width"] / 2)
            py = round((y - cy) * scale + result["height"] / 2)
            near = {
                image.getpixel(
                    (min(max(px + dx, 0), image.width - 1), min(max(py + dy, 0), image.height - 1))
                )
                for dx in range(-2, 3)
                for dy in range(-2, 3)
            }
            if tuple(colour) not in near:
                return f"not {key.split('_')[0]} at {lat}, {lon}"
    return None


def _containing_zip(result: dict[str, Any], expect: dict[str, Any]) -> str | None:
    zip_code = expect["containing_zip"]
    claimed = result.get("postalCode")
    if claimed is not None:
        return None if claimed == zip_code else f"claims ZIP {claimed}, it is in {zip_code}"
    if result.get("nearestPostalCode") is None:
        return "no ZIP at all"
    return None


def _zip_candidates(result: dict[str, Any], expect: dict[str, Any]) -> str | None:
    zip_code = expect["zip_among_candidates"]
    claimed = result.get("postalCode")
    if claimed is not None and result.get("postalCodeBasis") == "containment":
        return None if claimed == zip_code else f"claims ZIP {claimed}, it is in {zip_code}"
    if result.get("postalCodeBasis") not in ("estimate", "nearest_centre"):
        return f"postalCodeBasis {result.get('postalCodeBasis')!r}"
    offered = [c["code"] for c in result.get("postalCodeCandidates", [])]
    return None if zip_code in offered else f"{zip_code} not among candidates {offered}"


def _water(result: dict[str, Any], expect: dict[str, Any]) -> str | None:
    if "on_water" in expect and bool(result.get("onWater")) != expect["on_water"]:
        return f"onWater {result.get('onWater')} ({result.get('name')!r})"
    if expect.get("on_water") and not result.get("nearestOnly"):
        return f"on water, yet 'In {result.get('name')}'"
    if "nearest_only" in expect and bool(result.get("nearestOnly")) != expect["nearest_only"]:
        return f"nearestOnly {result.get('nearestOnly')} ({result.get('name')!r})"
    return None


ZIP_GRADES = ("right first", "right among, uncertain", "wrong and sure", "wrong, uncertain")
RIGHT_AND_SURE = "  of them not uncertain"  # right first, with postalCodeUncertain false


def zip_grade(result: dict[str, Any], zip_code: str) -> str:
    """How a reverse_geocode answer fares on the ZIP a point lies in (ZIP_GRADES)."""
    offered = [c["code"] for c in result.get("postalCodeCandidates") or []]
    first = result.get("postalCode") or (offered[0] if offered else None)
    uncertain = bool(result.get("postalCodeUncertain"))
    if result.get("postalCodeBasis") == "containment":  # a claim, never uncertain
        uncertain, offered = False, [first]
    if first == zip_code:
        return ZIP_GRADES[0]
    if uncertain:
        return ZIP_GRADES[1] if zip_code in offered else ZIP_GRADES[3]
    return ZIP_GRADES[2]


RING_GRADES = (
    "within the median claimed",
    "within the 9 in 10 claimed",
    "wrong and sure",
    "no range claimed, said so",
    "within the 19 in 20 claimed",
)
# "off by M% (median), up to A% (9 in 10)[ and up to B% (19 in 20)]"
CLAIMED_ERROR = re.compile(
    r"off by ([0-9.]+)% \(median\), up to ([0-9.]+)% \(9 in 10\)"
    r"(?: and up to ([0-9.]+)% \(19 in 20\))?"
)
UNMEASURED = "Error not measured"  # ring_answers.UNMEASURED: the answer claims no range


def ring_error(result: dict[str, Any], truth: float) -> float:
    """The answer's |error| against the truth, in %."""
    return abs(result["population"] - truth) / truth * 100


def ring_grade(result: dict[str, Any], truth: float) -> str:
    """How a circle's answer fares against the error range its warnings claim."""
    warned = " ".join(result.get("warnings") or [])
    claim = CLAIMED_ERROR.search(warned)
    if claim is None and UNMEASURED in warned:  # says it cannot say how far off
        return RING_GRADES[3]
    if claim is None:  # no range claimed: only the exact truth is right
        return RING_GRADES[0] if result["population"] == truth else RING_GRADES[2]
    error = ring_error(result, truth)
    if error <= float(claim.group(1)):
        return RING_GRADES[0]
    if error <= float(claim.group(2)):
        return RING_GRADES[1]
    widest = claim.group(3)  # the widest range claimed decides "wrong and sure"
    return RING_GRADES[4] if widest and error <= float(widest) else RING_GRADES[2]


def _ambiguity(result: dict[str, Any], expect: dict[str, Any]) -> str | None:
    if result.get("ambiguous") != expect["ambiguous"]:
        found = [c["label"] for c in result.get("candidates", [])]
        return f"ambiguous {result.get('ambiguous')} {found}"
    offered = [[c["countryCode"], c["admin1"]] for c in result["candidates"]]
    missing = [place for place in expect.get("candidates_include", []) if place not in offered]
    return f"candidates {offered} lack {missing}" if missing else None


def _postal_positions(
    result: dict[str, Any], args: dict[str, Any], expect: dict[str, Any]
) -> str | None:
    listed = result.get("results", result.get("postalCodeCandidates", []))
    warned = " ".join(result.get("warnings", []))
    for code in listed:
        truth = expect["postal_positions"].get(code.get("code"))
        if truth is None or code.get("positionPrecision") == "city" or code["code"] in warned:
            continue
        true_km = _km(args["lat"], args["lon"], *truth)
        if abs(code["distanceM"] / 1000 - true_km) > expect["km"]:
            return f"{code['code']} claimed {code['distanceM']:.0f} m away, is {true_km:.1f} km"
    return None


def check(
    tool: str, result: dict[str, Any], expect: dict[str, Any], args: dict[str, Any]
) -> str | None:
    """None when the case holds, else why not."""
    if "error_code" in expect:
        return f"answered instead of {expect['error_code']}"
    if "postal_positions" in expect:
        return _postal_positions(result, args, expect)
    if tool == "reverse_geocode":
        problem = _water(result, expect)
        if problem:
            return problem
        if "containing_zip" in expect:
            return _containing_zip(result, expect)
        if "zip_among_candidates" in expect:
            return _zip_candidates(result, expect)
        return _check_place(result, expect)
    if tool == "geocode" and "honest_near" in expect:
        if result.get("warnings"):
            return None
        return _check_place(result["results"][0], {"near": expect["honest_near"]})
    if tool == "search_nearby" and expect.get("exists"):
        return None if result["results"] else "empty page"
    if tool == "static_map":
        if result["zoom"] < expect.get("min_zoom", 0):
            return f"zoom {result['zoom']} < {expect['min_zoom']}"
        if expect.get("warns") and not result.get("warnings"):
            return "no warning"
        return _detail(result.get("png")) or _colours(result, expect)
    if tool == "geocode" and "ambiguous" in expect:
        return _ambiguity(result, expect)
    if tool == "geocode":
        results = result["results"]
        confidences = [r["confidence"] for r in results]
        if confidences != sorted(confidences, reverse=True):
            return "results not sorted by confidence"
        rank = expect.get("rank", 1)  # which result the expectation is about, from 1
        if len(results) < rank:
            return f"only {len(results)} results"
        return _check_place(results[rank - 1], expect)
    if tool == "search_nearby":
        places = result["results"][: expect.get("within_first")]  # prominence: among the first
        if "code" in expect and expect["code"] not in [r.get("code") for r in places]:
            return f"no {expect['code']} in {[r.get('code') for r in places]}"
        if "name" in expect and not any(_name_ok(r, expect["name"]) for r in places):
            return f"none of {expect['name']} in {[r['name'] for r in places]}"
        return None
    if "ring_truth" in expect:
        if ring_grade(result, expect["ring_truth"]) != RING_GRADES[2]:
            return None
        truth = expect["ring_truth"]
        return f"{result['population']:,} against {truth:,}: outside the range claimed"
    if "level" in expect and result.get("level") != expect["level"]:
        return f"level {result.get('level')} ({result.get('name')!r})"
    value = result.get("population", result.get("amount"))
    if "at_least" in expect:
        return None if value >= expect["at_least"] else f"{value} < {expect['at_least']}"
    low = expect["approx"] * (1 - expect["tolerance"])
    high = expect["approx"] * (1 + expect["tolerance"])
    return None if low <= value <= high else f"{value} outside {low:.0f}-{high:.0f}"


def refusal(expect: dict[str, Any], exc: AppError) -> str | None:
    """None when this refusal is the expected (or an honest) answer."""
    if expect.get("not_found") and exc.code == "NOT_FOUND":
        return None
    if exc.code == expect.get("error_code"):
        wanted = expect.get("message_contains", "")
        return None if wanted in exc.message else f"{exc.code} without {wanted!r}"
    honest = ("honest_near" in expect or expect.get("exists")) and exc.code == "UNSUPPORTED"
    if honest or ("detail" in expect and exc.code == "INVALID_ARGUMENT"):
        return None
    return f"{exc.code}: {exc.message[:100]}"


def run(verbose: bool) -> dict[str, dict[str, tuple[int, int]]]:
    """{"tool" or "class:<name>": (cases, held)}; and how often the nearest ZIP centre is
    the containing ZIP, under "nearest_zip"; the ZIP cases' grades under "zip:<half>:<grade>",
    the ring cases' under "ring:<half>:<grade>"."""
    cases = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        tool, expect = case["tool"], case["expect"]
        try:
            answer = service.execute(tool, case["args"])
            result = {**answer.structured, "png": answer.png}
            problem = (
                "expected NOT_FOUND"
                if expect.get("not_found")
                else check(tool, result, expect, case["args"])
            )
            if "containing_zip" in expect:
                nearest = (result.get("nearestPostalCode") or {}).get("code")
                nearest = nearest or result.get("postalCode")  # before: the nearest, unlabelled
                totals["nearest_zip"][0] += 1
                totals["nearest_zip"][1] += nearest == expect["containing_zip"]
            zip_code = expect.get("containing_zip") or expect.get("zip_among_candidates")
            if zip_code:
                grade = zip_grade(result, zip_code)
                sure = grade == ZIP_GRADES[0] and not result.get("postalCodeUncertain")
                for half in (case.get("half", "earlier"), "all"):
                    totals[f"zip:{half}:{grade}"][0] += 1
                    totals[f"zip:{half}:{RIGHT_AND_SURE}"][0] += sure
            if "ring_truth" in expect:
                grade = ring_grade(result, expect["ring_truth"])
                for half in (case.get("half", "earlier"), "all"):
                    totals[f"ring:{half}:{grade}"][0] += 1
        except AppError as exc:
            problem = refusal(expect, exc)
        for group in (tool, f"class:{case.get('class', 'fact')}"):
            totals[group][0] += 1
            totals[group][1] += problem is None
        if problem and verbose:
            print(f"  FAIL {tool} {case['note']}: {case['args']} -> {problem}")
    return {group: (n, held) for group, (n, held) in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--verbose", action="store_true", help="print every case that fails")
    parser.add_argument(
        "--rings", action="store_true", help="also the ring studies' error table (bench/rings.py)"
    )
    options = parser.parse_args()
    service.configure(options.data_dir)
    table = run(options.verbose)
    nearest = table.pop("nearest_zip", None)
    grades = {k: v[0] for k, v in table.items() if k.startswith("zip:")}
    ring_grades = {k: v[0] for k, v in table.items() if k.startswith("ring:")}
    table = {k: v for k, v in table.items() if not k.startswith(("zip:", "ring:"))}
    tools = {k: v for k, v in table.items() if not k.startswith("class:")}
    classes = {k: v for k, v in table.items() if k.startswith("class:")}
    print(f"{'tool / class':<24} {'cases':>6} {'held':>6} {'%':>7}")
    for group, (n, held) in [*tools.items(), *sorted(classes.items())]:
        print(f"{group:<24} {n:>6} {held:>6} {100 * held / n:>6.1f}%")
    n = sum(v[0] for v in tools.values())
    held = sum(v[1] for v in tools.values())
    print(f"{'all':<24} {n:>6} {held:>6} {100 * held / n:>6.1f}%")
    if nearest:
        print(f"nearest ZIP centre = containing ZIP in {nearest[1]} of {nearest[0]} points")
    print_zip_grades(grades)
    print_ring_grades(ring_grades)
    if options.rings:  # circles against independent totals (issue 54)
        import rings  # bench/rings.py, beside this script

        rings.report(service.provider().data, options.verbose)


def print_zip_grades(grades: dict[str, int]) -> None:
    halves = ["tune", "check", "earlier", "all"]
    print(f"{'ZIP of a point':<24}" + "".join(f"{h:>9}" for h in halves))
    for grade in (ZIP_GRADES[0], RIGHT_AND_SURE, *ZIP_GRADES[1:]):
        counts = [grades.get(f"zip:{half}:{grade}", 0) for half in halves]
        print(f"{grade:<24}" + "".join(f"{n:>9}" for n in counts))


def print_ring_grades(grades: dict[str, int]) -> None:
    halves = ["tune", "check", "fresh", "all"]
    print(f"{'ring vs its claim':<28}" + "".join(f"{h:>9}" for h in halves))
    for grade in (*RING_GRADES[:2], RING_GRADES[4], *RING_GRADES[2:4]):
        counts = [grades.get(f"ring:{half}:{grade}", 0) for half in halves]
        print(f"{grade:<28}" + "".join(f"{n:>9}" for n in counts))


if __name__ == "__main__":
    main()
