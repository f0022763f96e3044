"""The HTTP data API beside MCP, and a batch beside single calls, from one run.

  (m) our `geocode` through /mcp (the official client, stateless JSON)
  (r) the same call as GET /v1/geocode (httpx, one keep-alive connection per client)

Both go through the same api process, worker and Redis; sequential calls interleaved
m, r, m, r, ... (p50, p99 over --calls after a warm-up), then --clients concurrent clients
of each for --seconds (calls per second). Then a --batch-item POST /v1/geocode/batch
against the same number of single GET /v1/geocode calls, one after another and with
--clients at once (wall time per item), interleaved over --rounds.

    .venv/bin/python bench/rest_vs_mcp.py [--calls 300] [--clients 16] [--seconds 10]\
        [--batch 100] [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_e2e import (  # noqa: E402  (bench/mcp_e2e.py)
    Call,
    account,
    mcp_client_factory,
    processes,
    row,
    throughputs,
    wait_for_worker,
    wait_until_up,
    worker_command,
)
from metering import redis_for_bench  # noqa: E402

from app.kit.embedded_redis import free_port  # noqa: E402

QUERY = {"query": "Austin, TX", "limit": 1}
PLACES = ["Austin, TX", "Paris", "Denver", "München", "10001", "Boston", "Tokyo", "Lagos"]


def rest_client_factory(base_url: str, api_key: str) -> Callable[[], AsyncIterator[Call]]:
    async def make() -> AsyncIterator[Call]:
        headers = {"Authorization": f"Bearer {api_key}"}
        async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=60) as http:

            async def call() -> object:
                response = await http.get("/v1/geocode", params=QUERY)
                if response.status_code != 200:
                    raise RuntimeError(response.text)
                return response

            yield call

    return make


async def batch_vs_singles(base_url: str, api_key: str, args: argparse.Namespace) -> None:
    items = [{"query": PLACES[i % len(PLACES)], "limit": 1} for i in range(args.batch)]
    headers = {"Authorization": f"Bearer {api_key}"}
    times: dict[str, list[float]] = {"batch": [], "sequential": [], "concurrent": []}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=60) as http:
        pool = [
            httpx.AsyncClient(base_url=base_url, headers=headers, timeout=60)
            for _ in range(args.clients)
        ]

        async def single(client: httpx.AsyncClient, item: dict[str, object]) -> None:
            response = await client.get("/v1/geocode", params=item)
            if response.status_code != 200:
                raise RuntimeError(response.text)

        async def concurrent() -> None:
            queue = list(items)

            async def worker(client: httpx.AsyncClient) -> None:
                while queue:
                    await single(client, queue.pop())

            await asyncio.gather(*(worker(client) for client in pool))

        async def batch() -> None:
            response = await http.post("/v1/geocode/batch", json={"items": items})
            body = response.json()
            if response.status_code != 200 or body["credits"] != len(items):
                raise RuntimeError(response.text[:300])

        async def sequential() -> None:
            for item in items:
                await single(http, item)

        runs = {"batch": batch, "sequential": sequential, "concurrent": concurrent}
        for round_ in range(args.rounds + 1):
            for name, run in runs.items():
                started = time.perf_counter()
                await run()
                if round_:  # the first round warms connections up
                    times[name].append((time.perf_counter() - started) * 1000)
        for client in pool:
            await client.aclose()
    print(f"{args.batch}-item batch against {args.batch} single calls ({args.rounds} rounds)")
    base = statistics.median(times["batch"])
    for name, label in (
        ("batch", f"POST /v1/geocode/batch, {args.batch} items"),
        ("sequential", f"{args.batch} x GET /v1/geocode, one after another"),
        ("concurrent", f"{args.batch} x GET /v1/geocode, {args.clients} at once"),
    ):
        median = statistics.median(times[name])
        print(
            f"  {label:<48} {median:8.1f} ms  {median / args.batch:6.2f} ms/item"
            f"   {median / base:5.2f}x the batch"
        )


async def measure(base_url: str, api_key: str, args: argparse.Namespace) -> None:
    factories = {
        "m": mcp_client_factory(
            f"{base_url}/mcp", {"Authorization": f"Bearer {api_key}"}, "geocode", QUERY
        ),
        "r": rest_client_factory(base_url, api_key),
    }
    samples: dict[str, list[float]] = {name: [] for name in factories}
    async with contextlib.AsyncExitStack() as stack:
        calls = {
            name: await stack.enter_async_context(contextlib.asynccontextmanager(factory)())
            for name, factory in factories.items()
        }
        for round_ in range(30 + args.calls):
            for name, call in calls.items():
                started = time.perf_counter()
                await call()
                if round_ >= 30:
                    samples[name].append((time.perf_counter() - started) * 1000)
    # m, r, m, r, ... in slices: both see the machine in the same states; both use the
    # same api and worker, so their CPU is counted together (the rows' last column: 0).
    rates = await throughputs(factories, args.clients, args.seconds, 4, dict.fromkeys("mr", []))
    print(
        f"rest vs mcp bench: {args.calls} sequential calls each, interleaved, then "
        f"{args.clients} concurrent clients for {args.seconds:g} s each (in turns)"
    )
    row("(m) geocode via /mcp", samples["m"], *rates["m"])
    row("(r) GET /v1/geocode", samples["r"], *rates["r"])
    m50, r50 = statistics.median(samples["m"]), statistics.median(samples["r"])
    print(f"  p50 ratio r/m          {r50 / m50:5.2f}   (goal <= 1: REST no slower than MCP)")
    ratio = rates["r"][0] / rates["m"][0]
    print(f"  throughput ratio r/m   {ratio:5.2f}   (goal >= 1)")
    await batch_vs_singles(base_url, api_key, args)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--worker", default="default", help="pool:concurrency, e.g. threads:8")
    args = parser.parse_args()
    with redis_for_bench() as redis_url, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            "GEOSVC_REDIS_URL": redis_url,
            "GEOSVC_REDIS_KEY_PREFIX": f"bench-{secrets.token_hex(4)}:",
            "GEOSVC_DATABASE_URL": f"sqlite:///{work / 'bench.db'}",
            "GEOSVC_DATA_DIR": os.environ.get("GEOSVC_DATA_DIR", str(ROOT / ".geosvc")),
            "GEOSVC_SECRET_PEPPER": "bench-pepper",
            "GEOSVC_BASE_URL": base_url,
            "C_FORCE_ROOT": "1",
            # What a call costs, not the plan's limits (as bench/mcp_e2e.py).
            "GEOSVC_STANDARD_RATE_PER_S": "1000000",
            "GEOSVC_STANDARD_BURST": "1000000",
            "GEOSVC_STANDARD_CONCURRENCY": "1000",
        }
        python = sys.executable
        subprocess.run(
            [python, "-m", "app.cli", "migrate"], env=env, check=True, capture_output=True
        )
        subprocess.run([python, "-m", "app.cli", "data", "build"], env=env, check=True)
        uvicorn = [python, "-m", "uvicorn", "--log-level", "warning", "--host", "127.0.0.1"]
        with processes(
            (
                [*uvicorn, "--factory", "app.main:create_app", "--port", str(port)],
                env,
                work / "api.log",
            ),
            (worker_command(python, args.worker), env, work / "worker.log"),
        ):
            print("waiting for the server and the worker ...", flush=True)
            wait_until_up(base_url + "/")
            wait_for_worker(env)
            api_key = account(base_url)
            asyncio.run(measure(base_url, api_key, args))


if __name__ == "__main__":
    main()
