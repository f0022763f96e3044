"""Accuracy on a known-answer set: world facts (bench/known_answers.json), not our output.

Runs every case through `app.geodata.service` (the embedded provider unless the tool
provider settings say otherwise) and prints, per tool, how many cases hold.

Run: .venv/bin/python bench/accuracy.py [--data-dir DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.errors import AppError  # noqa: E402
from app.geodata import service  # noqa: E402

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


def check(tool: str, result: dict[str, Any], expect: dict[str, Any]) -> str | None:
    """None when the case holds, else why not."""
    if tool == "reverse_geocode":
        return _check_place(result, expect)
    if tool == "geocode":
        results = result["results"]
        confidences = [r["confidence"] for r in results]
        if confidences != sorted(confidences, reverse=True):
            return "results not sorted by confidence"
        return _check_place(results[0], expect)
    if tool == "search_nearby":
        if "code" in expect and expect["code"] not in [r.get("code") for r in result["results"]]:
            return f"no {expect['code']} in {[r.get('code') for r in result['results']]}"
        if "name" in expect and not any(_name_ok(r, expect["name"]) for r in result["results"]):
            return f"none of {expect['name']} in {[r['name'] for r in result['results']]}"
        return None
    value = result.get("population", result.get("amount"))
    if "at_least" in expect:
        return None if value >= expect["at_least"] else f"{value} < {expect['at_least']}"
    low = expect["approx"] * (1 - expect["tolerance"])
    high = expect["approx"] * (1 + expect["tolerance"])
    return None if low <= value <= high else f"{value} outside {low:.0f}-{high:.0f}"


def run(verbose: bool) -> dict[str, tuple[int, int]]:
    cases = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        tool, expect = case["tool"], case["expect"]
        try:
            result = service.execute(tool, case["args"]).structured
            problem = (
                "expected NOT_FOUND" if expect.get("not_found") else check(tool, result, expect)
            )
        except AppError as exc:
            problem = None if expect.get("not_found") and exc.code == "NOT_FOUND" else exc.code
        totals[tool][0] += 1
        totals[tool][1] += problem is None
        if problem and verbose:
            print(f"  FAIL {tool} {case['note']}: {case['args']} -> {problem}")
    return {tool: (n, held) for tool, (n, held) in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--verbose", action="store_true", help="print every case that fails")
    options = parser.parse_args()
    service.configure(options.data_dir)
    table = run(options.verbose)
    print(f"{'tool':<20} {'cases':>6} {'held':>6} {'%':>7}")
    for tool, (n, held) in table.items():
        print(f"{tool:<20} {n:>6} {held:>6} {100 * held / n:>6.1f}%")
    n = sum(v[0] for v in table.values())
    held = sum(v[1] for v in table.values())
    print(f"{'all':<20} {n:>6} {held:>6} {100 * held / n:>6.1f}%")


if __name__ == "__main__":
    main()
