"""One key flooding from a few addresses must not slow every tenant (issue 36, item 5).

On the production shape started here from scratch (bench/drill_stack.py: its own
redis-server and PostgreSQL, `geosvc api`, the paying and the bulk worker pool, beat)
behind deploy/nginx.conf run by Debian's nginx (as tests/test_proxy.py runs it; TLS on
127.0.0.1), a standard-plan "victim" calls `GET /v1/geocode` from 127.0.0.2 at --rate
calls/s (open loop) for --seconds in each phase:

  alone          nobody else calls
  flood          a second standard account's one key, from 127.0.0.3-7 with 20
                 connections each (100 in all), back to back, ignoring Retry-After;
                 once per --scheme, the Authorization scheme as the flood spells it
                 (issue 51, item 1: `BEARER`, a tab ... are the same key to the proxy)
  flood, no key limit
                 (--compare) the same flood with the proxy's per-key limit taken out of
                 the config: only the api's own refusal (in-process after Redis's first)

It prints the victim's p50/p99 and errors per phase, the flood's outcomes (who refused:
the proxy or the api), the api's CPU seconds, and the credits charged for refusals (the
flood account's credits used minus its successful calls). Goal: victim p99 under the
flood within 3 x alone, 0 victim errors, 0 credits for refusals.

The flood runs in its own process (`python bench/key_flood.py flood ...`) over raw
TLS HTTP/1.1 keep-alive connections, the cheapest client, paced at --flood-rate calls/s
in all (2,000: four times what the per-address limits let through from five addresses;
unpaced, it took a whole core of the two here, which stands for the attacker's own
machines, not the service's cost).

The standard plan's per-key rate is --key-rate (5 calls/s, bursts of 10) rather than its
default 50: what the flood key is *admitted* is real work its plan pays for, and 50
geocodes a second fill the two worker processes this machine has (the victim, on the same
paying pool, then queues behind them: capacity, not the refusals measured here). At 5/s
the proxy lets about 100 calls/s of the key through (its per-key limit) and the api
refuses about 95 of them: the cost of a refusal is what the victim feels.

    .venv/bin/python bench/key_flood.py [--seconds 20] [--rate 4] [--flood-rate 2000] [--compare]
        [--scheme Bearer --scheme BEARER --scheme bearer --scheme two-spaces --scheme tab]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from drill_stack import Stack, build_geodata, production_shape, wait_for  # noqa: E402
from metering import percentile  # noqa: E402
from noisy_neighbour import ISOLATED_POOLS, ms, new_account  # noqa: E402

from app.kit.embedded_redis import free_port  # noqa: E402
from app.queue.liveness import children_of  # noqa: E402
from tests.test_proxy import local_config, self_signed  # noqa: E402

PATH = "/v1/geocode?query=Denver&limit=1"
VICTIM_ADDRESS = "127.0.0.2"
FLOOD_ADDRESSES = [f"127.0.0.{n}" for n in range(3, 8)]
KEY_LIMIT_LINE = "limit_req zone=req_per_key burst=200 nodelay;"
# --scheme: how the flood spells the scheme and what follows it, by name (a tab is no
# easy command-line argument).
SCHEMES = {
    "Bearer": "Bearer ",
    "BEARER": "BEARER ",
    "bearer": "bearer ",
    "two-spaces": "Bearer  ",
    "tab": "Bearer\t",
}


@contextmanager
def nginx(api_url: str, *, key_limit: bool) -> Iterator[str]:
    """deploy/nginx.conf in front of `api_url`; yields its https URL."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    with tempfile.TemporaryDirectory(prefix="key-flood-nginx-") as tmp:
        directory = Path(tmp)
        self_signed(directory)
        api_port = int(api_url.rsplit(":", 1)[1])
        https_port = free_port()
        config = local_config(f"127.0.0.1:{api_port}", free_port(), https_port, directory)
        if not key_limit:
            assert config.count(KEY_LIMIT_LINE) == 1
            config = config.replace(KEY_LIMIT_LINE, "")
        (directory / "nginx.conf").write_text(config)
        main = f"pid {directory}/nginx.pid; error_log {directory}/error.log; daemon off;"
        if os.geteuid() == 0:
            main += " user root;"
        process = subprocess.Popen(
            [binary, "-p", str(directory), "-c", str(directory / "nginx.conf"), "-g", main],
            stdout=subprocess.DEVNULL,
        )
        url = f"https://127.0.0.1:{https_port}"
        try:
            wait_for(lambda: httpx.get(f"{url}/healthz", verify=False).status_code == 200, "nginx")
            yield url
        finally:
            process.terminate()
            process.wait(timeout=10)


# --- the flood process ----------------------------------------------------------------


def _outcome(status: int, body: bytes) -> str:
    if status == 200:
        return "ok"
    try:
        error = json.loads(body)["error"]
        return f"{status} {error['code']}:{error.get('limit', '-')}"
    except (ValueError, KeyError, TypeError):
        return f"http_{status}"


class RawTlsClient:
    """One keep-alive HTTP/1.1 connection over TLS from a given source address."""

    def __init__(self, url: str, key: str, source: str, scheme: str = "Bearer ") -> None:
        parts = httpx.URL(url)
        self.host, self.port, self.source = parts.host, parts.port or 443, source
        self.request = (
            f"GET {PATH} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Authorization: {scheme}{key}\r\nAccept: application/json\r\n\r\n"
        ).encode()
        self.context = ssl.create_default_context()
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(
                self.host, self.port, ssl=self.context, local_addr=(self.source, 0)
            )

    async def call(self) -> str:
        if self.reader is not None and self.reader.at_eof():
            self.close()
        try:
            await self.connect()
            assert self.reader is not None
            assert self.writer is not None
            self.writer.write(self.request)
            head = await self.reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            outcome = _outcome(status, await self.reader.readexactly(length))
            if b"connection: close" in head.lower():
                self.close()
            return outcome
        except (OSError, asyncio.IncompleteReadError, StopIteration) as exc:
            self.close()
            return type(exc).__name__

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def flood(
    url: str, key: str, per_address: int, seconds: float, rate: float, scheme: str = "Bearer"
) -> None:
    """`per_address` connections from each flood address, each calling again as soon as
    it is answered (whatever Retry-After says) but no more often than its share of `rate`
    calls/s; one JSON line. The pace stands for the attacker's own machines: unpaced,
    this process alone took a core of the two the service has here."""
    outcomes: Counter[str] = Counter()
    durations: dict[str, list[float]] = {}
    connections = per_address * len(FLOOD_ADDRESSES)
    interval = connections / rate
    # Connected (TLS) first, then "ready": the victim starts timing on a flood under way,
    # not on this process's imports and handshakes (seconds on a busy machine).
    clients = [
        RawTlsClient(url, key, source, SCHEMES[scheme])
        for _ in range(per_address)
        for source in FLOOD_ADDRESSES
    ]
    for client in clients:
        await client.connect()
    print("ready", flush=True)
    started = time.monotonic()
    stop_at = started + seconds

    async def one_connection(client: RawTlsClient, number: int) -> None:
        next_at = started + interval * number / connections
        while time.monotonic() < stop_at:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at = max(next_at + interval, time.monotonic() - interval)
            began = time.perf_counter()
            outcome = await client.call()
            outcomes[outcome] += 1
            durations.setdefault(outcome, []).append(time.perf_counter() - began)
        client.close()

    await asyncio.gather(*(one_connection(client, n) for n, client in enumerate(clients)))
    medians = {name: round(statistics.median(d) * 1000, 1) for name, d in durations.items()}
    print(json.dumps({"outcomes": outcomes, "median_ms": medians}), flush=True)


# --- the victim and the phases --------------------------------------------------------


@dataclass
class Phase:
    name: str
    victim: list[tuple[str, float]] = field(default_factory=list)
    flood: Counter[str] = field(default_factory=Counter)
    charged_refusals: int = 0
    flood_median_ms: dict[str, float] = field(default_factory=dict)
    api_cpu_s: float = 0.0

    def latencies_ms(self) -> list[float]:
        return [seconds * 1000 for outcome, seconds in self.victim if outcome == "ok"]

    def victim_errors(self) -> int:
        return sum(1 for outcome, _ in self.victim if outcome != "ok")


async def victim_calls(url: str, key: str, rate: float, seconds: float) -> list[tuple[str, float]]:
    """Open loop from VICTIM_ADDRESS: a call every 1/rate s."""
    transport = httpx.AsyncHTTPTransport(local_address=VICTIM_ADDRESS, verify=False)
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
    async with httpx.AsyncClient(
        base_url=url, transport=transport, headers=headers, timeout=60
    ) as http:

        async def timed() -> tuple[str, float]:
            started = time.perf_counter()
            try:
                response = await http.get(PATH)
                outcome = _outcome(response.status_code, response.content)
            except httpx.HTTPError as exc:
                outcome = type(exc).__name__
            return outcome, time.perf_counter() - started

        await timed()  # a warm connection, not measured
        started = time.monotonic()
        tasks = []
        for number in range(int(seconds * rate)):
            await asyncio.sleep(max(0.0, started + number / rate - time.monotonic()))
            tasks.append(asyncio.create_task(timed()))
        return list(await asyncio.gather(*tasks))


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (the api's uvicorn workers)."""
    total = 0
    for one in [pid, *children_of(pid)]:
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
    return total / os.sysconf("SC_CLK_TCK")


def run_phase(
    stack: Stack,
    url: str,
    name: str,
    victim_key: str,
    flooder: tuple[str, httpx.Client] | None,
    args: argparse.Namespace,
    scheme: str = "Bearer",
) -> Phase:
    phase = Phase(name)
    api_pid = stack.supervisor.services["api"].pid
    used_before = int(flooder[1].get("/usage").json()["used"]) if flooder else 0
    process = None
    if flooder is not None:
        command = [sys.executable, __file__, "flood", url, flooder[0], "20"]
        command += [str(args.seconds + 2), str(args.flood_rate), scheme]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        time.sleep(1.0)  # the flood is under way before the victim's first call
    cpu_before = cpu_seconds(api_pid)
    phase.victim = asyncio.run(victim_calls(url, victim_key, args.rate, args.seconds))
    phase.api_cpu_s = cpu_seconds(api_pid) - cpu_before
    if process is not None and flooder is not None:
        out, _ = process.communicate(timeout=args.seconds + 120)
        flood_report = json.loads(out.strip().splitlines()[-1])
        phase.flood = Counter(flood_report["outcomes"])
        phase.flood_median_ms = flood_report["median_ms"]
        time.sleep(1.0)  # the last commits settle
        used = int(flooder[1].get("/usage").json()["used"])
        phase.charged_refusals = used - used_before - phase.flood["ok"]
    return phase


def report(phase: Phase, seconds: float) -> None:
    latencies = phase.latencies_ms()
    outcomes = Counter(outcome for outcome, _ in phase.victim)
    print(
        f"  {phase.name:26} victim p50 {ms(latencies, 0.5)} ms  p99 {ms(latencies, 0.99)} ms"
        f"  outcomes {dict(outcomes)}  api CPU {phase.api_cpu_s:.1f} s in {seconds:g} s"
    )
    if phase.flood:
        total = sum(phase.flood.values())
        print(
            f"  {'':26} flood {total} calls ({total / seconds:.0f}/s): {dict(phase.flood)}; "
            f"credits charged for refusals: {phase.charged_refusals}\n"
            f"  {'':26} flood's median time per outcome (ms): {phase.flood_median_ms}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="per phase")
    parser.add_argument(
        "--rate", type=float, default=4.0, help="victim calls per second (below --key-rate)"
    )
    parser.add_argument(
        "--compare", action="store_true", help="also flood with the proxy's per-key limit off"
    )
    parser.add_argument(
        "--flood-rate", type=float, default=2000.0, help="the flood's calls/s at most, in all"
    )
    parser.add_argument(
        "--scheme",
        action="append",
        choices=sorted(SCHEMES),
        help="a flood phase with this spelling of the scheme (repeat; default Bearer)",
    )
    parser.add_argument(
        "--key-rate",
        type=float,
        default=5.0,
        help="the standard plan's calls/s per key (bursts of twice that); see below",
    )
    args = parser.parse_args()
    if args.rate >= args.key_rate:
        parser.error("--rate must stay below --key-rate: the victim keeps within its plan")
    geodata_dir = Path(os.environ.get("GEOSVC_DATA_DIR", ROOT / ".geosvc"))
    build_geodata(geodata_dir)  # a no-op when the indices are current
    limits = {
        "GEOSVC_STANDARD_RATE_PER_S": str(args.key_rate),
        "GEOSVC_STANDARD_BURST": str(int(args.key_rate * 2)),
    }
    print(f"== starting the production shape (standard keys: {args.key_rate:g} calls/s) ...")
    with production_shape(
        aof=None, geodata_dir=geodata_dir, extra_env=limits, worker_queues=ISOLATED_POOLS
    ) as stack:
        victim_key, _victim_http = new_account(stack.base_url, standard=True)
        flooder = new_account(stack.base_url, standard=True)
        with nginx(stack.base_url, key_limit=True) as url:
            phases = [run_phase(stack, url, "alone", victim_key, None, args)]
            for scheme in args.scheme or ["Bearer"]:
                name = f"flood ({scheme})"
                phases.append(run_phase(stack, url, name, victim_key, flooder, args, scheme))
        if args.compare:
            with nginx(stack.base_url, key_limit=False) as url:
                phases.append(
                    run_phase(stack, url, "flood, no proxy key limit", victim_key, flooder, args)
                )
    for phase in phases:
        report(phase, args.seconds)
    alone = percentile(phases[0].latencies_ms(), 0.99)
    print("\n== summary (victim p99 under the flood against alone)")
    for phase in phases[1:]:
        p99 = percentile(phase.latencies_ms(), 0.99) if phase.latencies_ms() else float("inf")
        print(
            f"  {phase.name}: victim p99 {p99 / alone:5.2f} x alone (goal <= 3), victim errors "
            f"{phase.victim_errors()} (goal 0), credits for refusals {phase.charged_refusals} "
            "(goal 0)"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "flood":
        url, key, per_address, seconds, rate, scheme = sys.argv[2:]
        asyncio.run(flood(url, key, int(per_address), float(seconds), float(rate), scheme))
    else:
        main()
