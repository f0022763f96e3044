"""Slow client metadata documents cannot exhaust the api (issue 36 item 2).

On the production shape started here from scratch (bench/drill_stack.py: its own
redis-server and PostgreSQL on free ports, `geosvc api` with --api-workers uvicorn
workers, two Celery workers, beat; 127.0.0.1 only), a standard-plan account calls
`GET /v1/geocode` at --rate calls/s (open loop), alone and while
an attacker keeps --attackers `/authorize` requests outstanding, each naming a new
Client ID Metadata Document URL (no cache helps) on the attacker's web server, which
answers the headers and then one byte every 0.5 s, forever.

The attacker's server listens on 20 loopback addresses (20 "remote hosts") and each
attack client sends from a loopback source address of its own (127.0.1.N), so neither
the per-host fetch slots nor the per-address rate alone stop it: the fetch's total
deadline, the per-process slots and fetching without a thread or a database connection
are what is measured. A client answered 429/503 waits its Retry-After plus a growing
random jitter (noisy_neighbour.py's `backoff_s`, what SDKs do), then asks again with a
new URL; any other answer, at once. The api admits loopback documents with the
development setting GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK (refused in production), as the
tests do.

The two conditions take turns (--slices of --slice-seconds each), so the drift of the
machine's other load (it shares two cores) falls on both alike. It prints the account's
p50/p99 and errors alone and under attack, the attack's outcomes
(by HTTP status) and how long its answers took; goal: p99 under attack <= 1.5 x alone,
0 errors. The five slowest calls of each condition are printed beside the time the
service's request log measured for each (admission to answer): the difference is time
spent before admission or after it (the api's event loop, the sockets).

    .venv/bin/python bench/authorize_slowloris.py [--slices 6] [--slice-seconds 20]
        [--rate 2] [--attackers 200] [--api-workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from drill_stack import build_geodata, production_shape  # noqa: E402
from metering import percentile  # noqa: E402
from noisy_neighbour import backoff_s, new_account  # noqa: E402

from tests.fakes.slow_http import DribblingServer  # noqa: E402

DOCUMENT_HOSTS = [f"127.0.2.{n}" for n in range(1, 21)]


def source_address(number: int) -> str:
    return f"127.0.1.{number % 250 + 1}"


# --- the attack process ----------------------------------------------------------------


async def attack(base_url: str, clients: int, seconds: float) -> None:
    """`clients` authorize requests outstanding until `seconds` pass; one JSON line.
    Niced and confined to one core (where there are two): the attacker's CPU is not the
    service's, as it would not be from another machine."""
    os.nice(10)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) > 1:  # one core: a remote attacker's CPU is not the service's
        os.sched_setaffinity(0, cpus[-1:])
    dribbler = DribblingServer(DOCUMENT_HOSTS, interval_s=0.5).start()
    outcomes: Counter[str] = Counter()
    answered_s: list[float] = []
    stop_at = time.monotonic() + seconds

    async def one_client(number: int) -> None:
        transport = httpx.AsyncHTTPTransport(local_address=source_address(number))
        refused_in_a_row = 0
        async with httpx.AsyncClient(transport=transport, timeout=600) as http:
            while time.monotonic() < stop_at:
                host = DOCUMENT_HOSTS[secrets.randbelow(len(DOCUMENT_HOSTS))]
                client_id = dribbler.url(f"/c/{secrets.token_hex(8)}.json", host)
                query = urlencode({"response_type": "code", "client_id": client_id, "state": "x"})
                started = time.monotonic()
                try:
                    # the attacker gives up on what is still unanswered when time is up
                    left_s = max(0.1, stop_at - time.monotonic())
                    answer = await asyncio.wait_for(
                        http.get(f"{base_url}/authorize?{query}"), left_s
                    )
                    outcomes[f"http_{answer.status_code}"] += 1
                    retry_after_s = float(answer.headers.get("retry-after", 0))
                except (httpx.HTTPError, TimeoutError) as exc:
                    outcomes[type(exc).__name__] += 1
                    retry_after_s = 1.0
                answered_s.append(time.monotonic() - started)
                refused_in_a_row = refused_in_a_row + 1 if retry_after_s else 0
                wait = backoff_s(retry_after_s, refused_in_a_row) if retry_after_s else 0.0
                await asyncio.sleep(min(wait, max(0.0, stop_at - time.monotonic())))

    await asyncio.gather(*(one_client(n) for n in range(clients)))
    print(
        json.dumps(
            {
                "outcomes": outcomes,
                "answered_s": answered_s,
                "connections": sum(dribbler.connections.values()),
            }
        ),
        flush=True,
    )
    dribbler.stop()


# --- the account and the phases ----------------------------------------------------------


Call = tuple[str, float, float]  # outcome, seconds, when it started (epoch seconds)


async def account_calls(base_url: str, key: str, rate: float, seconds: float) -> list[Call]:
    """Open loop: a call every 1/rate s whether or not the last one has returned."""
    url = f"{base_url}/v1/geocode?query=Denver&limit=1"
    headers = {"Authorization": f"Bearer {key}"}

    async def one(http: httpx.AsyncClient) -> Call:
        started, wall = time.perf_counter(), time.time()
        try:
            answer = await http.get(url, headers=headers)
            outcome = "ok" if answer.status_code == 200 else f"http_{answer.status_code}"
        except httpx.HTTPError as exc:
            outcome = type(exc).__name__
        return outcome, time.perf_counter() - started, wall

    async with httpx.AsyncClient(timeout=60) as http:
        await one(http)  # a warm connection, not measured
        started = time.monotonic()
        tasks = []
        # The measuring client's own collections (~60 ms over this process's objects) would
        # be counted as the service's latency: none while it measures.
        gc.collect()
        gc.disable()
        try:
            for number in range(int(seconds * rate)):
                await asyncio.sleep(max(0.0, started + number / rate - time.monotonic()))
                tasks.append(asyncio.create_task(one(http)))
            return list(await asyncio.gather(*tasks))
        finally:
            gc.enable()


def report(name: str, calls: list[Call]) -> tuple[float, int]:
    latencies = [seconds * 1000 for outcome, seconds, _ in calls if outcome == "ok"]
    errors = sum(1 for outcome, _, _ in calls if outcome != "ok")
    p50 = percentile(latencies, 0.5) if latencies else float("nan")
    p99 = percentile(latencies, 0.99) if latencies else float("inf")
    outcomes = dict(Counter(outcome for outcome, _, _ in calls))
    print(f"  {name:12} account p50 {p50:8.1f} ms  p99 {p99:8.1f} ms  errors {errors}  {outcomes}")
    return p99, errors


def slowest(name: str, calls: list[Call], logged: list[dict[str, object]]) -> None:
    """The slowest calls as the account saw them beside the time the service's request
    log measured from admission to answer: a gap is time before admission (the api's
    event loop, the accept queue) or after it (sending the answer)."""
    at_ms = [(_epoch_ms(str(entry["at"])), entry) for entry in logged]
    for outcome, seconds, wall in sorted(calls, key=lambda call: -call[1])[:5]:
        nearest = min(at_ms, key=lambda pair: abs(pair[0] - wall * 1000), default=None)
        service_ms = (
            f"{nearest[1]['latencyMs']:.1f} ms logged"
            if nearest and abs(nearest[0] - wall * 1000) < 250
            else "not found in the log"
        )
        print(f"    {name:12} {seconds * 1000:8.1f} ms seen, {service_ms} ({outcome})")


def _epoch_ms(iso: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def attack_slice(base_url: str, args: argparse.Namespace) -> tuple[list, dict]:
    """The account's calls for one slice while the attack process runs."""
    command = [sys.executable, __file__, "attack", base_url, str(args.attackers)]
    process = subprocess.Popen(
        [*command, str(args.slice_seconds + 5)], stdout=subprocess.PIPE, text=True
    )
    time.sleep(3.0)  # the attack is under way before the account's first call
    calls = asyncio.run(account_calls(base_url, args.key, args.rate, args.slice_seconds))
    out, _ = process.communicate(timeout=args.slice_seconds + 300)
    return calls, json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--slices", type=int, default=6, help="alone/attack turns")
    parser.add_argument("--slice-seconds", type=float, default=20.0)
    parser.add_argument("--rate", type=float, default=2.0, help="account calls per second")
    parser.add_argument("--attackers", type=int, default=200, help="authorize requests at once")
    parser.add_argument("--api-workers", type=int, default=2)
    args = parser.parse_args()
    geodata_dir = Path(os.environ.get("GEOSVC_DATA_DIR", ROOT / ".geosvc"))
    build_geodata(geodata_dir)  # a no-op when the indices are current
    print("== starting the production shape ...", flush=True)
    alone: list[Call] = []
    attacked: list[Call] = []
    outcomes: Counter[str] = Counter()
    answered: list[float] = []
    connections = 0
    with production_shape(
        aof=None,
        geodata_dir=geodata_dir,
        extra_env={"GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK": "true"},
        api_workers=args.api_workers,
    ) as stack:
        args.key, http = new_account(stack.base_url, standard=True)
        # Turns (alone, attack, alone, ...): the machine's other load drifts over minutes,
        # and both conditions see the same drift.
        for _ in range(args.slices):
            alone += asyncio.run(
                account_calls(stack.base_url, args.key, args.rate, args.slice_seconds)
            )
            calls, result = attack_slice(stack.base_url, args)
            attacked += calls
            outcomes.update(result["outcomes"])
            answered += result["answered_s"]
            connections += result["connections"]
        logged = http.get("/usage/calls", params={"limit": 1000}).json()["calls"]
    seconds = args.slices * args.slice_seconds
    print(
        f"\n== account: GET /v1/geocode at {args.rate:g}/s, {seconds:g} s in each condition "
        f"({args.slices} turns of {args.slice_seconds:g} s); {args.attackers} slow-document "
        f"/authorize requests outstanding; {args.api_workers} api workers"
    )
    p99_alone, _ = report("alone", alone)
    p99_attacked, errors = report("under attack", attacked)
    print("  the slowest calls, and the service's own measure of each (its request log):")
    slowest("alone", alone, logged)
    slowest("under attack", attacked, logged)
    print(
        f"  attack: {sum(outcomes.values())} authorize answers {dict(outcomes)}; "
        f"{connections} connections reached the slow server; answer time median "
        f"{statistics.median(answered):.2f} s, max {max(answered):.2f} s"
    )
    print(
        f"\n== p99 under attack {p99_attacked / p99_alone:.2f} x alone (goal <= 1.5), "
        f"errors {errors} (goal 0)"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "attack":
        base_url, clients, seconds = sys.argv[2:5]
        asyncio.run(attack(base_url, int(clients), float(seconds)))
    else:
        main()
