"""One customer cannot slow down another (issue 20): a paying victim under two attacks.

On the production shape started here from scratch (bench/drill_stack.py: its own
redis-server and PostgreSQL on free ports, `geosvc api`, the paying worker pool
`--queues tools` and the niced bulk pool `--queues tools.free,tools.heavy,billing`, beat;
127.0.0.1 only), a standard-plan "victim" calls `geocode` at --rate calls/s (open loop),
for --seconds in each phase:

  alone     nobody else calls
  attack a  one free account runs 100 concurrent clients of `geocode`, back to back;
            after a refusal each waits its retryAfterSeconds plus a growing random
            jitter (--attackers honour: what SDKs do) or calls again at once
            (--attackers ignore: a flood)
  attack b  four free accounts run 10 concurrent clients each of 1280x1280 world maps

It prints the victim's p50/p99 and outcomes per phase, the attackers' outcomes and their
median time to a refusal, and whether any refusal was charged (each attacker's credits
used = its successful calls). --compare runs the same phases first on the same shape
without isolation (limits off, both pools taking every queue at the same priority: the
service before issue 20) and prints the two side by side. --compare-hold runs them first
with GEOSVC_HTTP_REFUSED_HOLD_MAX_S=0 (a client refused again inside its wait is read
again at once: the api before issue 58's holds).

Every client calls the api directly, which trusts no proxy here (a connection from a
configured proxy is never held: app/http/server.py).

Attack clients run in their own process (a second `python bench/noisy_neighbour.py
attack ...`), so their event loop never delays the victim's timing. Calls are raw
JSON-RPC `tools/call` POSTs to the stateless /mcp endpoint; the attackers speak HTTP/1.1
over plain asyncio streams, the cheapest client, so the load generator takes as little
of the two cores as it can (the service shares them with it here).

    .venv/bin/python bench/noisy_neighbour.py [--seconds 20] [--rate 2] [--compare]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import statistics
import subprocess
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

from drill_stack import UNLIMITED_TENANTS, Stack, build_geodata, production_shape  # noqa: E402
from metering import percentile  # noqa: E402

GEOCODE = ("geocode", {"query": "Denver", "limit": 1})
WORLD_MAP = (
    "static_map",
    {"center": {"lat": 0, "lon": 0}, "zoom": 2, "width": 1280, "height": 1280},
)
ISOLATED_POOLS = ["tools", "tools.free,tools.heavy,billing"]
# Before issue 20: no limits, one FIFO for every plan, every pool at the same priority.
UNPROTECTED_ENV = UNLIMITED_TENANTS
# Straight to the api: no proxy in front (drill_stack trusts 127.0.0.1 for its nginx)
DIRECT = {"GEOSVC_FORWARDED_ALLOW_IPS": ""}
# Before issue 58's holds: a refused client's next request is read at once
NO_HOLD = {"GEOSVC_HTTP_REFUSED_HOLD_MAX_S": "0"}


def call_body(tool: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    name, arguments = tool
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


async def timed_call(
    http: httpx.AsyncClient, url: str, key: str, body: dict[str, Any]
) -> tuple[str, float]:
    started = time.perf_counter()
    try:
        response = await http.post(
            url,
            json=body,
            headers={
                "Authorization": f"Bearer {key}",
                "Accept": "application/json, text/event-stream",
            },
        )
        outcome, _ = outcome_of_answer(response.status_code, response.content)
    except httpx.HTTPError as exc:
        outcome = type(exc).__name__
    return outcome, time.perf_counter() - started


# --- the attack process -------------------------------------------------------------


class RawClient:
    """One keep-alive HTTP/1.1 connection speaking just enough to POST and read a JSON
    answer: a hundred of them cost the load generator far less CPU than httpx, so the
    attack is limited by the service, not by this process."""

    def __init__(self, url: str, key: str, body: dict[str, Any]) -> None:
        parts = httpx.URL(url)
        self.host, self.port = parts.host, parts.port or 80
        payload = json.dumps(body).encode()
        self.request = (
            f"POST {parts.raw_path.decode()} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n"
        ).encode() + payload
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def call(self) -> tuple[str, float, float | None]:
        """(outcome, seconds, retryAfterSeconds of a refusal). A kept-alive connection
        the server closed while idle is opened again, as any HTTP client does."""
        if self.reader is not None and self.reader.at_eof():
            self.close()
        started = time.perf_counter()
        try:
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            assert self.reader is not None
            self.writer.write(self.request)
            head = await self.reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            body = await self.reader.readexactly(length)
            outcome, retry_after_s = outcome_of_answer(status, body)
        except (OSError, asyncio.IncompleteReadError, StopIteration) as exc:
            outcome, retry_after_s = type(exc).__name__, None
            self.close()
        return outcome, time.perf_counter() - started, retry_after_s

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def outcome_of_answer(status: int, body: bytes) -> tuple[str, float | None]:
    """ok, or the error code (with the limit for RATE_LIMITED), or the HTTP status; and
    the refusal's retryAfterSeconds."""
    if status != 200:
        return f"http_{status}", None
    result = json.loads(body).get("result", {})
    if not result.get("isError"):
        return "ok", None
    error = result.get("structuredContent", {}).get("error", {})
    code = str(error.get("code", "unknown"))
    outcome = f"{code}:{error['limit']}" if "limit" in error else code
    return outcome, error.get("retryAfterSeconds")


def backoff_s(retry_after_s: float, refused_in_a_row: int) -> float:
    """What a well-behaved client waits after a refusal: at least retryAfterSeconds, plus
    "full jitter" growing with each refusal in a row (capped at 10 s), so a hundred
    clients told the same time do not all come back at that same moment."""
    spread = min(10.0, retry_after_s * 2**refused_in_a_row)
    return retry_after_s + random.uniform(0, spread)


async def attack(
    url: str, keys: list[str], tool: str, clients: int, seconds: float, *, honour: bool
) -> None:
    """`clients` back-to-back callers per key until `seconds` pass, waiting out each
    refusal's retryAfterSeconds when `honour`; prints one JSON line."""
    body = call_body(GEOCODE if tool == "geocode" else WORLD_MAP)
    outcomes: Counter[str] = Counter()
    refusal_s: list[float] = []
    successes: dict[str, int] = dict.fromkeys(keys, 0)
    stop_at = time.monotonic() + seconds

    async def one_client(key: str) -> None:
        client = RawClient(url, key, body)
        refused_in_a_row = 0
        while time.monotonic() < stop_at:
            outcome, elapsed, retry_after_s = await client.call()
            outcomes[outcome] += 1
            if outcome == "ok":
                successes[key] += 1
                refused_in_a_row = 0
            elif outcome.startswith(("RATE_LIMITED", "QUOTA_EXCEEDED")):
                refusal_s.append(elapsed)
                refused_in_a_row += 1
                if honour and retry_after_s:
                    pause = backoff_s(retry_after_s, refused_in_a_row)
                    await asyncio.sleep(min(pause, max(0.0, stop_at - time.monotonic())))
        client.close()

    print("started", flush=True)  # this interpreter's start-up is over (see run_phase)
    await asyncio.gather(*(one_client(key) for key in keys for _ in range(clients)))
    print(
        json.dumps(
            {"outcomes": outcomes, "refusal_s": refusal_s, "successes": list(successes.values())}
        ),
        flush=True,
    )


# --- the victim and the phases --------------------------------------------------------


@dataclass
class Phase:
    name: str
    rate: float
    victim: list[tuple[str, float]] = field(default_factory=list)
    attack: dict[str, Any] | None = None
    charged_refusals: int = 0  # credits used beyond the attackers' successful calls

    def latencies_ms(self) -> list[float]:
        return [seconds * 1000 for outcome, seconds in self.victim if outcome == "ok"]

    def victim_errors(self) -> int:
        return sum(1 for outcome, _ in self.victim if outcome != "ok")


async def victim_calls(url: str, key: str, rate: float, seconds: float) -> list[tuple[str, float]]:
    """Open loop: a call every 1/rate s whether or not the last one has returned."""
    body = call_body(GEOCODE)
    async with httpx.AsyncClient(timeout=60) as http:
        await timed_call(http, url, key, body)  # a warm connection, not measured
        started = time.monotonic()
        tasks = []
        for number in range(int(seconds * rate)):
            await asyncio.sleep(max(0.0, started + number / rate - time.monotonic()))
            tasks.append(asyncio.create_task(timed_call(http, url, key, body)))
        return list(await asyncio.gather(*tasks))


def new_account(base_url: str, *, standard: bool) -> tuple[str, httpx.Client]:
    http = httpx.Client(base_url=base_url, timeout=30)
    email = f"bench-{secrets.token_hex(4)}@example.com"
    http.post("/auth/signup", json={"email": email, "password": "bench-password-1"})
    if standard:
        checkout = http.post("/subscription").json()["checkoutUrl"]
        http.post(checkout, headers={"Origin": base_url})
    key = str(http.post("/api-keys", json={"name": "bench"}).json()["plaintext"])
    return key, http


def run_phase(
    stack: Stack,
    name: str,
    victim_key: str,
    attackers: list[tuple[str, httpx.Client]],
    tool: str,
    clients: int,
    args: argparse.Namespace,
) -> Phase:
    phase = Phase(name, args.rate)
    used_before = [int(http.get("/usage").json()["used"]) for _, http in attackers]
    process = None
    if attackers:
        command = [sys.executable, __file__, "attack", args.attackers, stack.mcp_url, tool]
        command.append(str(clients))
        command += [str(args.seconds + 2), *(key for key, _ in attackers)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        # The attack is under way for a second before the victim's first call. Its
        # interpreter's start-up (imports: 0.7 CPU-s, 1.2-1.7 s on a loaded machine) is
        # the load generator's, not the flood's: it is waited out first.
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "started"
        time.sleep(1.0)
    phase.victim = asyncio.run(victim_calls(stack.mcp_url, victim_key, args.rate, args.seconds))
    if process is not None:
        out, _ = process.communicate(timeout=args.seconds + 120)
        phase.attack = json.loads(out.strip().splitlines()[-1])
        # every successful call is charged, nothing else: used - before = successes
        for (_, http), before, successes in zip(
            attackers, used_before, phase.attack["successes"], strict=True
        ):
            used = int(http.get("/usage").json()["used"])
            phase.charged_refusals += used - before - successes
    return phase


def run_mode(mode: str, geodata_dir: Path, args: argparse.Namespace) -> list[Phase]:
    isolated = mode != "unprotected"
    env = DIRECT | (NO_HOLD if mode == "no hold" else {})
    print(f"\n== {mode}: starting the production shape ...", flush=True)
    with production_shape(
        aof=None,
        geodata_dir=geodata_dir,
        extra_env=env if isolated else env | UNPROTECTED_ENV,
        worker_queues=ISOLATED_POOLS if isolated else ["", ""],
    ) as stack:
        victim_key, _victim_http = new_account(stack.base_url, standard=True)
        flood = [new_account(stack.base_url, standard=False)]
        mappers = [new_account(stack.base_url, standard=False) for _ in range(4)]
        phases = [
            run_phase(stack, "alone", victim_key, [], "", 0, args),
            run_phase(stack, "attack a", victim_key, flood, "geocode", 100, args),
            run_phase(stack, "attack b", victim_key, mappers, "static_map", 10, args),
        ]
    for phase in phases:
        report(phase)
    return phases


def ms(samples: list[float], q: float) -> str:
    return f"{percentile(samples, q):8.1f}" if samples else "       -"


def report(phase: Phase) -> None:
    latencies = phase.latencies_ms()
    outcomes = Counter(outcome for outcome, _ in phase.victim)
    print(
        f"  {phase.name:9} victim p50 {ms(latencies, 0.5)} ms  p99 {ms(latencies, 0.99)} ms"
        f"  outcomes {dict(outcomes)}"
    )
    # where in the phase (seconds after the victim's first call) the slowest ones were
    timed = sorted((s * 1000, n / phase.rate) for n, (o, s) in enumerate(phase.victim) if o == "ok")
    slowest = ", ".join(f"{ms:.0f} ms at +{at:.1f} s" for ms, at in timed[-3:])
    print(f"            victim's slowest three: {slowest}")
    if phase.attack is not None:
        refusals = [seconds * 1000 for seconds in phase.attack["refusal_s"]]
        median = f"{statistics.median(refusals):.1f} ms" if refusals else "-"
        print(
            f"            attackers {dict(phase.attack['outcomes'])}\n"
            f"            median time to a refusal {median}; "
            f"credits charged for refusals: {phase.charged_refusals}"
        )


def summary(label: str, phases: list[Phase]) -> None:
    alone = percentile(phases[0].latencies_ms(), 0.99)
    print(f"  {label}:")
    for phase in phases[1:]:
        p99 = percentile(phase.latencies_ms(), 0.99) if phase.latencies_ms() else float("inf")
        print(
            f"    {phase.name}: victim p99 {p99 / alone:6.2f} x alone (goal <= 3), "
            f"victim errors {phase.victim_errors()} (goal 0)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="per phase")
    parser.add_argument("--rate", type=float, default=2.0, help="victim calls per second")
    parser.add_argument("--compare", action="store_true", help="also run without isolation")
    parser.add_argument(
        "--compare-hold", action="store_true", help="also run without holding refused clients"
    )
    parser.add_argument(
        "--attackers",
        choices=["honour", "ignore"],
        default="honour",
        help="whether attack clients wait out retryAfterSeconds (ignore: a tight-loop flood)",
    )
    args = parser.parse_args()
    geodata_dir = Path(os.environ.get("GEOSVC_DATA_DIR", ROOT / ".geosvc"))
    build_geodata(geodata_dir)  # a no-op when the indices are current
    results = {}
    if args.compare:
        results["unprotected"] = run_mode("unprotected", geodata_dir, args)
    if args.compare_hold:
        results["no hold"] = run_mode("no hold", geodata_dir, args)
    results["isolated"] = run_mode("isolated", geodata_dir, args)
    print("\n== summary (victim p99 under attack against the same mode's alone)")
    for label, phases in results.items():
        summary(label, phases)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "attack":
        mode, url, tool, clients, seconds, *keys = sys.argv[2:]
        honour = mode == "honour"
        asyncio.run(attack(url, keys, tool, int(clients), float(seconds), honour=honour))
    else:
        main()
