"""Soak (issue 21, item 9): steady mixed load for a long time, watching for growth.

On the production shape started here from scratch (bench/drill_stack.py: its own
redis-server with AOF and PostgreSQL on free ports, `geosvc api`, the paying pool
`--queues tools`, the niced bulk pool `--queues tools.free,tools.heavy,billing`, beat),
three accounts (two standard, one free) call six tools (all but get_demographics, which
came later) at --rate calls/s in all (open loop, arguments drawn from fixed lists so the
answer cache sees hits and misses). Halfway
through, the first account's key is revoked; that account goes on with its second key.

Printed per --window minutes: calls, p50/p99 (ms), errors, api and worker RSS (MB, each
process with its children), their open file descriptors, Redis used memory (MB), the
usage outbox depth, and the ledger (credits in usage_events) against the calls answered
with data so far. At the end, with the outbox drained: ledger = successes, and the growth
verdict: the last window against the first for RSS and p99 (goal <= 1.1x), 0 errors.

Expected refusals are not errors: a call with the revoked key answered 403 after the
revocation. A success with that key more than 1 s after revocation is an error.

    .venv/bin/python bench/soak.py [--minutes 30] [--window 5] [--rate 12]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from drill_stack import Stack, build_geodata, production_shape, wait_for  # noqa: E402
from metering import percentile  # noqa: E402

from app.queue.liveness import children_of  # noqa: E402

POOLS = ["tools", "tools.free,tools.heavy,billing"]
# A free account at a third of the load stays under the free rate (5/s) and never
# meets the quota in a soak: what is measured is growth, not refusals.
SOAK_ENV = {"GEOSVC_FREE_QUOTA": "10000000"}
# Which account makes each call: the free one a fifth (2.4/s of the default 12/s, under
# its 5/s), the standard ones two fifths each.
SHARES = (0, 1, 2, 0, 1)

ZIPS = ["10001", "94103", "60614", "02139", "98101", "80202", "78701", "33130", "19104"]
PLACES = ["Denver", "Paris", "Tokyo", "Austin, TX", "Lagos", "Berlin", "Lima", "Toronto"]
POINTS = [(40.758, -73.9855), (48.8566, 2.3522), (35.68, 139.76), (-33.87, 151.21),
          (51.5074, -0.1278), (19.43, -99.13), (30.267, -97.743)]  # fmt: skip


def random_call() -> tuple[str, dict[str, Any]]:
    lat, lon = random.choice(POINTS)
    return random.choice(
        [
            ("get_population", {"postal_code": random.choice(ZIPS)}),
            ("get_average_income", {"postal_code": random.choice(ZIPS)}),
            ("geocode", {"query": random.choice(PLACES), "limit": 3}),
            ("reverse_geocode", {"lat": lat + random.uniform(-0.2, 0.2), "lon": lon}),
            ("search_nearby", {"lat": lat, "lon": lon, "radius_m": 50000, "limit": 5,
                               "category": random.choice(["city", "airport"])}),
            ("static_map", {"center": {"lat": lat, "lon": lon}, "zoom": random.randint(3, 9),
                            "width": 256, "height": 256}),
        ]
    )  # fmt: skip


@dataclass
class Account:
    name: str
    http: httpx.Client
    keys: list[tuple[str, str]]  # (key id, plaintext)
    revoked_at: float | None = None  # monotonic
    calls: int = 0

    def key(self) -> str:
        """The first key until it is revoked; then the second, and the revoked one for
        every tenth call (each must be refused)."""
        self.calls += 1
        if self.revoked_at is None or self.calls % 10 == 0:
            return self.keys[0][1]
        return self.keys[1][1]


@dataclass
class Window:
    calls: list[tuple[str, float]] = field(default_factory=list)  # (outcome, seconds)
    errors: Counter[str] = field(default_factory=Counter)
    sample: dict[str, float] = field(default_factory=dict)


def new_account(base_url: str, name: str, *, standard: bool) -> Account:
    http = httpx.Client(base_url=base_url, timeout=30, headers={"Origin": base_url})
    email = f"soak-{name}-{secrets.token_hex(4)}@example.com"
    http.post("/auth/signup", json={"email": email, "password": "soak-bench-passphrase-7"})
    if standard:
        checkout = http.post("/subscription").json()["checkoutUrl"]
        http.post(checkout)
    keys = []
    for number in range(2):
        made = http.post("/api-keys", json={"name": f"soak {number}"}).json()
        keys.append((str(made["key"]["keyId"]), str(made["plaintext"])))
    return Account(name, http, keys)


def tree_stats(pid: int) -> tuple[float, int]:
    """(RSS in MB, open fds) of a process and all its descendants."""
    rss_kb, fds, pending = 0, 0, [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            rss_kb += next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmRSS"))
            fds += len(os.listdir(f"/proc/{current}/fd"))
        except (OSError, StopIteration):
            continue
        pending += children_of(current)
    return rss_kb / 1024, fds


def ledger_credits(stack: Stack) -> int:
    rows = stack.postgres.query("SELECT COALESCE(SUM(credits), 0) FROM usage_events")
    return int(rows[0][0])  # type: ignore[call-overload]


def sample(stack: Stack, successes: int) -> dict[str, float]:
    api_rss, api_fds = tree_stats(stack.supervisor.services["api"].pid)
    worker_stats = [tree_stats(worker.pid) for worker in stack.workers]
    store = stack.redis.client()
    prefix = stack.env["GEOSVC_REDIS_KEY_PREFIX"]
    return {
        "api_rss": api_rss,
        "api_fds": api_fds,
        "worker_rss": sum(rss for rss, _ in worker_stats),
        "worker_fds": sum(fds for _, fds in worker_stats),
        "redis_mb": int(store.info("memory")["used_memory"]) / 2**20,
        "outbox": int(store.llen(f"{prefix}usage:outbox")),
        "ledger": ledger_credits(stack),
        "successes": successes,
    }


def outcome_of(response: httpx.Response) -> str:
    if response.status_code != 200:
        return f"http_{response.status_code}"
    result = response.json().get("result", {})
    if not result.get("isError"):
        return "ok"
    return str(result.get("structuredContent", {}).get("error", {}).get("code", "unknown"))


async def one_call(
    http: httpx.AsyncClient, url: str, account: Account, window: Window, totals: Counter[str]
) -> None:
    key = account.key()
    name, arguments = random_call()
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}  # fmt: skip
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    started = time.perf_counter()
    try:
        outcome = outcome_of(await http.post(url, json=body, headers=headers))
    except httpx.HTTPError as exc:
        outcome = type(exc).__name__
    elapsed = time.perf_counter() - started
    revoked_key = account.revoked_at is not None and key == account.keys[0][1]
    if revoked_key and outcome == "http_403":
        totals["revoked_key_refused"] += 1
        return
    if revoked_key and outcome == "ok" and time.monotonic() - (account.revoked_at or 0) > 1.0:
        outcome = "revoked_key_answered"
    window.calls.append((outcome, elapsed))
    if outcome == "ok":
        totals["ok"] += 1
    else:
        window.errors[f"{name}:{outcome}"] += 1


async def soak(
    stack: Stack, accounts: list[Account], args: argparse.Namespace
) -> tuple[Window, list[Window]]:
    """Drive the load; the first --warmup seconds (caches, connection pools, the first
    map fonts) are answered and charged like the rest but belong to no window."""
    windows: list[Window] = []
    warmup = Window()
    totals: Counter[str] = Counter()
    window_s, warmup_s = args.window * 60, args.warmup
    total_s = warmup_s + args.minutes * 60
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=64)) as http:
        started = time.monotonic()
        pending: set[asyncio.Task[None]] = set()
        number = 0
        while (now := time.monotonic()) - started < total_s:
            index = int((now - started - warmup_s) // window_s)
            if index == len(windows):
                await asyncio.gather(*pending)  # the last window's calls have all answered
                if windows:
                    windows[-1].sample = sample(stack, totals["ok"])
                    report(len(windows), windows[-1], args.window)
                windows.append(Window())
            revoke_at = warmup_s + args.minutes * 30
            if accounts[0].revoked_at is None and now - started >= revoke_at:
                key_id = accounts[0].keys[0][0]
                accounts[0].http.delete(f"/api-keys/{key_id}").raise_for_status()
                accounts[0].revoked_at = time.monotonic()
                print(f"   revoked {accounts[0].name}'s first key", flush=True)
            account = accounts[SHARES[number % len(SHARES)]]
            window = windows[-1] if index >= 0 else warmup
            task = asyncio.create_task(one_call(http, stack.mcp_url, account, window, totals))
            pending.add(task)
            task.add_done_callback(pending.discard)
            number += 1
            await asyncio.sleep(max(0.0, started + number / args.rate - time.monotonic()))
        await asyncio.gather(*pending)
    windows[-1].sample = sample(stack, totals["ok"])
    report(len(windows), windows[-1], args.window)
    print(f"   calls with the revoked key refused 403: {totals['revoked_key_refused']}")
    if warmup.errors:
        print(f"   warm-up errors: {dict(warmup.errors)}")
    return warmup, windows


def report(number: int, window: Window, minutes: float) -> None:
    latencies = [seconds * 1000 for outcome, seconds in window.calls if outcome == "ok"]
    s = window.sample
    print(
        f"{(number - 1) * minutes:>4g}-{number * minutes:<4g}min "
        f"calls {len(window.calls):>6}  p50 {statistics.median(latencies):6.1f}  "
        f"p99 {percentile(latencies, 0.99):6.1f} ms  errors {sum(window.errors.values()):>3}  "
        f"api {s['api_rss']:6.1f} MB/{s['api_fds']:.0f} fd  "
        f"workers {s['worker_rss']:6.1f} MB/{s['worker_fds']:.0f} fd  "
        f"redis {s['redis_mb']:5.2f} MB  outbox {s['outbox']:.0f}  "
        f"ledger {s['ledger']:.0f} / ok {s['successes']:.0f}",
        flush=True,
    )
    if window.errors:
        print(f"      errors: {dict(window.errors)}", flush=True)


def verdict(stack: Stack, warmup: Window, windows: list[Window]) -> None:
    successes = int(windows[-1].sample["successes"])
    wait_for(lambda: ledger_credits(stack) == successes, "the ledger to reach the successes", 60)
    first, last = windows[0], windows[-1]

    def p99(window: Window) -> float:
        return percentile([s for outcome, s in window.calls if outcome == "ok"], 0.99)

    ratios = {
        "api RSS": last.sample["api_rss"] / first.sample["api_rss"],
        "worker RSS": last.sample["worker_rss"] / first.sample["worker_rss"],
        "p99": p99(last) / p99(first),
    }
    errors = sum(sum(w.errors.values()) for w in [warmup, *windows])
    print("\n== verdict (last window / first window; goal <= 1.10)")
    for name, ratio in ratios.items():
        print(f"   {name:<10} {ratio:5.2f}x  {'ok' if ratio <= 1.1 else 'GROWTH'}")
    print(f"   errors     {errors}  {'ok' if errors == 0 else 'FAIL'}")
    print(f"   ledger     {ledger_credits(stack)} = successes {successes}  ok")
    print(f"   restarts   {stack.supervisor.restarts()} (processes that exited and were restarted)")
    summary = {"ratios": ratios, "errors": errors, "successes": successes}
    print(json.dumps(summary | {"restarts": stack.supervisor.restarts()}))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--window", type=float, default=5.0, help="minutes per printed window")
    parser.add_argument("--rate", type=float, default=12.0, help="calls per second in all")
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds before window 1")
    args = parser.parse_args()
    geodata_dir = Path(os.environ.get("GEOSVC_DATA_DIR", ROOT / ".geosvc"))
    build_geodata(geodata_dir)  # a no-op when the indices are current
    print(f"== soak: {args.minutes:g} min at {args.rate:g} calls/s, windows of {args.window:g} min")
    with production_shape(
        aof="everysec", geodata_dir=geodata_dir, extra_env=SOAK_ENV, worker_queues=POOLS
    ) as stack:
        accounts = [
            new_account(stack.base_url, "standard-a", standard=True),
            new_account(stack.base_url, "standard-b", standard=True),
            new_account(stack.base_url, "free-c", standard=False),
        ]
        warmup, windows = asyncio.run(soak(stack, accounts, args))
        verdict(stack, warmup, windows)


if __name__ == "__main__":
    main()
