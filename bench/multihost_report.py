"""The tables of bench/multihost_drill.py: per phase, and the ledger per account."""

from __future__ import annotations

import collections
from typing import Any

FAULTS = {"api-kill": "api-kill", "worker-kill": "worker-kill", "partition": "partition",
          "master-kill": "master-kill"}  # fmt: skip


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def outcome(record: dict[str, Any]) -> str:
    if record["status"] == 200:
        return "ok"
    return "retryable" if record.get("retryable") else "other"


def phase_table(records: list[dict[str, Any]], marks: dict[str, float],
                events: dict[str, float],
                groups: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """One row per phase: the calls that started in it. `groups`: phase -> the accounts
    its fault hits (their calls of the phase are counted apart too)."""
    order = sorted((at, name) for name, at in marks.items() if name != "end")
    rows = []
    for index, (begins, name) in enumerate(order):
        ends = order[index + 1][0] if index + 1 < len(order) else float("inf")
        calls = [r for r in records if begins <= r["start"] < ends]
        counts = collections.Counter(outcome(r) for r in calls)
        codes = collections.Counter(str(r.get("code")) for r in calls if r["status"] != 200)
        latencies = [1000 * (r["end"] - r["start"]) for r in calls]
        row: dict[str, Any] = {
            "phase": name,
            "seconds": round((min(ends, marks.get("end", ends)) - begins), 1),
            "calls": len(calls),
            "ok": counts["ok"],
            "retryable": counts["retryable"],
            "other": counts["other"],
            "p50_ms": percentile(latencies, 0.50),
            "p99_ms": percentile(latencies, 0.99),
            "codes": dict(codes.most_common()),
        }
        if name in FAULTS and FAULTS[name] in events:
            row.update(fault_measures(records, events[FAULTS[name]], ends))
        if name in (groups or {}):
            theirs = [r for r in calls if r["account"] in (groups or {})[name]]
            row["hit"] = {"accounts": len((groups or {})[name]),
                          **collections.Counter(outcome(r) for r in theirs)}  # fmt: skip
        if name == "master-kill" and "promoted" in events:
            row["promoted_s"] = round(events["promoted"] - events["master-kill"], 1)
        if name == "recovery" and "healed" in events:
            back = events.get("recovered")
            row["worker2_back_s"] = None if back is None else round(back - events["healed"], 1)
        rows.append(row)
    return rows


def fault_measures(records: list[dict[str, Any]], at: float, ends: float) -> dict[str, Any]:
    """The calls in flight at the fault (by outcome), and the last failure after it."""
    held = [r for r in records if r["start"] < at < r["end"]]
    # failures of the calls started before the phase ended (however late they ended)
    failed_after = [r["end"] for r in records
                    if r["start"] < ends and r["end"] >= at and outcome(r) != "ok"]  # fmt: skip
    ok_after = [r["end"] for r in records if r["start"] >= at and outcome(r) == "ok"]
    return {
        "in_flight": dict(collections.Counter(outcome(r) for r in held)),
        "last_failure_s": round(max(failed_after) - at, 2) if failed_after else None,
        "first_ok_s": round(min(ok_after) - at, 2) if ok_after else None,
    }


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def measure(row: dict[str, Any]) -> str:
    parts = []
    if "in_flight" in row:
        flight = ", ".join(f"{k} {v}" for k, v in sorted(row["in_flight"].items())) or "none"
        parts.append(f"in flight at the fault: {flight}")
        last = row["last_failure_s"]
        parts.append("no failed call after it" if last is None else f"last failure +{last} s")
    if "promoted_s" in row:
        parts.append(f"replica promoted +{row['promoted_s']} s")
    if "hit" in row:
        hit = row["hit"]
        parts.append(f"its {hit['accounts']} accounts: ok {hit.get('ok', 0)}, "
                     f"retry {hit.get('retryable', 0)}, other {hit.get('other', 0)}")  # fmt: skip
    if "worker2_back_s" in row:
        back = row["worker2_back_s"]
        parts.append("worker2 ran no task" if back is None else f"worker2 ran a task +{back} s")
    return "; ".join(parts)


def print_report(result: dict[str, Any]) -> None:
    header = (f"{'phase':<16}{'secs':>6}{'calls':>7}{'ok':>7}{'retry':>7}{'other':>7}"
              f"{'p50 ms':>8}{'p99 ms':>8}  measure")  # fmt: skip
    print(header)
    print("-" * len(header))
    for row in result["phases"]:
        print(f"{row['phase']:<16}{row['seconds']:>6}{row['calls']:>7}{row['ok']:>7}"
              f"{row['retryable']:>7}{row['other']:>7}{_ms(row['p50_ms']):>8}"
              f"{_ms(row['p99_ms']):>8}  {measure(row)}")  # fmt: skip
        if row["codes"]:
            print(f"{'':<16}errors: " + ", ".join(f"{k}={v}" for k, v in row["codes"].items()))
    print()
    print(f"{'account':<20}{'client ok':>10}{'ledger':>8}{'counter':>9}{'lost':>6}{'extra':>7}"
          f"{'reconciled':>12}")  # fmt: skip
    for name, row in result["ledger"].items():
        lost = max(0, row["client_ok"] - row["ledger"])
        extra = max(0, row["ledger"] - row["client_ok"])
        print(f"{name:<20}{row['client_ok']:>10}{row['ledger']:>8}{row['counter']:>9}"
              f"{lost:>6}{extra:>7}{row.get('reconciled', '-'):>12}")  # fmt: skip
    for note in result["notes"]:
        print(f"note: {note}")
    print(f"drill took {result['seconds']} s")
