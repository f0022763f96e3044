"""End-to-end MCP latency and throughput, against two baselines, from one run.

  (a) a bare `MCPServer` with a trivial tool over stateless Streamable HTTP (JSON responses)
  (b) a bare Celery round trip (send a trivial task, await its result) on the same Redis
      and the same `geosvc worker`
  (c) our `geocode` through /mcp: bearer auth, credit reservation, the Celery worker,
      commit and the usage event

Each is measured sequentially (p50, p99 over --calls, after a warm-up; the three
interleaved call by call), then with --clients concurrent clients for --seconds each
(calls per second; the three take turns in --slices slices, so they too see the same
machine). --worker picks the worker's pool, e.g. threads:8 (default: the pool
`geosvc worker` picks itself; with every tool embedded, prefork, one process per CPU).
The rounds run side by side in one process against servers started here: uvicorn for
(a) and for our api, one `geosvc worker` for (b) and (c), the local Redis (or an
embedded one) under a throwaway key prefix, and a throwaway SQLite database. The
geodata indices come from GEOSVC_DATA_DIR (default .geosvc; built first when missing).

    .venv/bin/python bench/mcp_e2e.py [--calls 300] [--clients 16] [--seconds 10]\
        [--slices 5] [--worker threads:64]
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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import httpx2
from celery import Celery

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from drill_stack import geodata_dir  # noqa: E402  (bench/drill_stack.py)
from metering import bench_prefix, percentile, redis_for_bench  # noqa: E402  (bench/metering.py)

from app.kit.embedded_redis import free_port  # noqa: E402

# uvicorn's options as `geosvc api` serves (app/http/server.py: the protocol with the
# request bounds and one write per answer, keep-alive, no server header), with --factory.
AS_GEOSVC_API = [
    "--http", "app.http.server:BoundedHttpTools", "--timeout-keep-alive", "5",
    "--no-server-header", "--factory",
]  # fmt: skip

BARE_MCP_APP = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def echo(text: str) -> dict[str, str]:
    return {"text": text}


app = server.streamable_http_app(json_response=True, stateless_http=True)
"""


def wait_until_up(url: str, deadline_s: float = 90) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


@contextlib.contextmanager
def processes(
    *commands: tuple[list[str], dict[str, str], Path],
) -> Iterator[list[subprocess.Popen[bytes]]]:
    started = []
    try:
        for argv, env, log in commands:
            started.append(
                subprocess.Popen(argv, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
            )
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


Call = Callable[[], Awaitable[object]]


def cpu_seconds(pids: list[int]) -> float:
    """CPU time of these processes and their descendants (a worker's pool), from /proc."""
    total, frontier = 0.0, list(pids)
    while frontier:
        pid = frontier.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        for children in Path(f"/proc/{pid}/task").glob("*/children"):
            frontier.extend(int(child) for child in children.read_text().split())
    return total


@dataclass
class Turn:
    """One stack's slice of the throughput run: its clients call until `ends_at`."""

    ends_at: float
    clients_left: int
    over: asyncio.Event = field(default_factory=asyncio.Event)


async def throughputs(
    factories: dict[str, Callable[[], AsyncIterator[Call]]],
    clients: int,
    seconds: float,
    slices: int,
    pids: dict[str, list[int]],
) -> dict[str, tuple[float, float]]:
    """For each stack: calls per second of `clients` calling back to back, and the CPU-ms
    per call of its server processes `pids[name]` meanwhile. The stacks take turns in
    `slices` slices of `seconds / slices` each (a, b, c, a, b, c, ...), so a machine that
    is slower for a while is slower for all three, as in the sequential rounds."""
    turns = {name: [asyncio.Queue[Turn | None]() for _ in range(clients)] for name in factories}
    connected = asyncio.Semaphore(0)

    async def one_client(name: str, queue: asyncio.Queue[Turn | None]) -> None:
        async for call in factories[name]():
            await call()  # warm the connection
            connected.release()
            while (turn := await queue.get()) is not None:
                while time.monotonic() < turn.ends_at:
                    await call()
                    done[name] += 1
                turn.clients_left -= 1
                if not turn.clients_left:
                    turn.over.set()

    done = dict.fromkeys(factories, 0)
    elapsed, cpu = dict.fromkeys(factories, 0.0), dict.fromkeys(factories, 0.0)
    tasks = [
        asyncio.create_task(one_client(name, queue))
        for name, queues in turns.items()
        for queue in queues
    ]
    for _ in tasks:  # every client connected before the first slice
        await connected.acquire()
    for _ in range(slices):
        for name, queues in turns.items():
            started, cpu_before = time.monotonic(), cpu_seconds(pids[name])
            turn = Turn(ends_at=started + seconds / slices, clients_left=clients)
            for queue in queues:
                queue.put_nowait(turn)
            await turn.over.wait()  # the slice's last calls are in
            elapsed[name] += time.monotonic() - started
            cpu[name] += cpu_seconds(pids[name]) - cpu_before
    for queues in turns.values():
        for queue in queues:
            queue.put_nowait(None)
    await asyncio.gather(*tasks)
    return {
        name: (done[name] / elapsed[name], cpu[name] * 1000 / max(done[name], 1))
        for name in factories
    }


def mcp_client_factory(
    url: str, headers: dict[str, str], tool: str, args: dict
) -> Callable[[], AsyncIterator[Call]]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def make() -> AsyncIterator[Call]:
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        async with (
            http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):

            async def call() -> object:
                result = await client.call_tool(tool, args)
                if result.is_error:
                    raise RuntimeError(result.content)
                return result

            yield call

    return make


def celery_client_factory(env: dict[str, str]) -> Callable[[], AsyncIterator[Call]]:
    app = celery_app_for(env)

    async def make() -> AsyncIterator[Call]:
        async def call() -> object:
            # The built-in `celery.accumulate` echoes its argument: a trivial task.
            result = app.send_task("celery.accumulate", args=[1], queue="tools")
            return await asyncio.to_thread(result.get, timeout=30)

        yield call

    return make


def celery_app_for(env: dict[str, str]) -> Celery:
    from app.kit.config import Settings
    from app.queue.celery import celery_config

    settings = Settings(
        redis_url=env["GEOSVC_REDIS_URL"], redis_key_prefix=env["GEOSVC_REDIS_KEY_PREFIX"]
    )
    app = Celery("bench", set_as_current=False)
    app.conf.update(celery_config(settings))
    return app


def wait_for_worker(env: dict[str, str], deadline_s: float = 90) -> None:
    app = celery_app_for(env)
    deadline = time.monotonic() + deadline_s
    while not app.control.ping(timeout=1.0):
        if time.monotonic() > deadline:
            raise RuntimeError("the worker did not answer a ping")


def account(base_url: str) -> str:
    """A standard-plan account (no cap) and its API key, through the control plane."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        http.post(
            "/auth/signup",
            json={
                "email": f"bench-{secrets.token_hex(4)}@example.com",
                "password": "bench-password",
            },
        ).raise_for_status()
        checkout = http.post("/subscription").json()["checkoutUrl"]
        http.post(checkout, headers={"Origin": base_url})
        return str(http.post("/api-keys", json={"name": "bench"}).json()["plaintext"])


def row(label: str, samples: list[float], rate: float, cpu_ms: float) -> None:
    p50, p99 = statistics.median(samples), percentile(samples, 0.99)
    print(
        f"  {label:<48} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   {rate:8.1f} calls/s"
        f"   {cpu_ms:5.2f} CPU-ms/call"
    )


async def measure(
    urls: dict[str, str],
    env: dict[str, str],
    api_key: str,
    args: argparse.Namespace,
    pids: dict[str, list[int]],
) -> None:
    bare = mcp_client_factory(urls["bare"], {}, "echo", {"text": "hello"})
    celery = celery_client_factory(env)
    ours = mcp_client_factory(
        urls["ours"],
        {"Authorization": f"Bearer {api_key}"},
        "geocode",
        {"query": "Austin, TX", "limit": 1},
    )
    factories = {"a": bare, "b": celery, "c": ours}
    # Sequential calls interleaved a, b, c, a, b, c, ...: the three see the same machine.
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
    rates = await throughputs(factories, args.clients, args.seconds, args.slices, pids)
    results = {name: (samples[name], *rates[name]) for name in factories}
    print(
        f"mcp e2e bench: {args.calls} sequential calls each, then {args.clients} concurrent "
        f"clients for {args.seconds:g} s each, in {args.slices} slices taking turns"
    )
    row("(a) bare MCPServer, trivial tool", *results["a"])
    row("(b) bare Celery round trip, same Redis", *results["b"])
    row("(c) our geocode via /mcp (auth+metering+Celery)", *results["c"])
    a50, b50, c50 = (statistics.median(results[k][0]) for k in "abc")
    print(f"  p50 ratio c/(a+b)            {c50 / (a50 + b50):5.2f}   (goal <= 1.15)")
    print(f"  throughput ratio c/a         {results['c'][1] / results['a'][1]:5.2f}")
    # Every (c) call does an (a)-like MCP exchange and a (b)-like Celery round trip on the
    # same cores, so it cannot beat the two run back to back: 1 / (1/a + 1/b) calls/s.
    bound = 1 / (1 / results["a"][1] + 1 / results["b"][1])
    ratio = results["c"][1] / bound
    print(
        f"  throughput c/(a, b in series) {ratio:5.2f}   (goal >= 0.9; series bound "
        f"{bound:.1f} calls/s)"
    )
    # Server side only (the bare server; the worker; the api and the worker), at 16 clients.
    cpu_c, cpu_ab = results["c"][2], results["a"][2] + results["b"][2]
    print(f"  CPU-ms per call: (c) {cpu_c:.2f}, (a)+(b) {cpu_ab:.2f}, ratio {cpu_c / cpu_ab:5.2f}")


def bench_env(redis_url: str, work: Path, **extra: str) -> dict[str, str]:
    """The servers' environment: `redis_url` under a throwaway key prefix, a throwaway
    SQLite database in `work`, the prebuilt indices, and an account limit no bench
    reaches."""
    return {
        **os.environ,
        "GEOSVC_REDIS_URL": redis_url,
        "GEOSVC_REDIS_KEY_PREFIX": bench_prefix(),
        "GEOSVC_DATABASE_URL": f"sqlite:///{work / 'bench.db'}",
        "GEOSVC_DATA_DIR": str(geodata_dir()),  # built first when missing
        "GEOSVC_SECRET_PEPPER": "bench-pepper",
        "C_FORCE_ROOT": "1",
        # The rate and concurrency checks run on every call, at limits 16 clients of one
        # account do not reach: this measures what a call costs, not the plan.
        "GEOSVC_STANDARD_RATE_PER_S": "1000000",
        "GEOSVC_STANDARD_BURST": "1000000",
        "GEOSVC_STANDARD_CONCURRENCY": "1000",
        **extra,
    }


def worker_command(python: str, spec: str) -> list[str]:
    command = [python, "-m", "app.cli", "worker", "--loglevel", "warning"]
    if spec == "default":
        return command
    pool, _, concurrency = spec.partition(":")
    return [*command, "--pool", pool, *(["--concurrency", concurrency] if concurrency else [])]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--slices", type=int, default=5, help="turns of each stack at --clients")
    parser.add_argument(
        "--worker",
        default="default",
        help="pool:concurrency of the worker, e.g. threads:8 (default: its own choice)",
    )
    args = parser.parse_args()
    with redis_for_bench() as redis_url, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "bare_mcp.py").write_text(BARE_MCP_APP)
        env = bench_env(redis_url, work)
        bare_port, api_port = free_port(), free_port()
        urls = {
            "bare": f"http://127.0.0.1:{bare_port}/mcp",
            "ours": f"http://127.0.0.1:{api_port}/mcp",
        }
        env["GEOSVC_BASE_URL"] = f"http://127.0.0.1:{api_port}"
        python = sys.executable
        subprocess.run(
            [python, "-m", "app.cli", "migrate"], env=env, check=True, capture_output=True
        )
        subprocess.run([python, "-m", "app.cli", "data", "build"], env=env, check=True)
        uvicorn = [python, "-m", "uvicorn", "--log-level", "warning", "--host", "127.0.0.1"]
        with processes(
            (
                [*uvicorn, "--app-dir", tmp, "bare_mcp:app", "--port", str(bare_port)],
                env,
                work / "bare.log",
            ),
            (
                [*uvicorn, *AS_GEOSVC_API, "app.main:create_app", "--port", str(api_port)],
                env,
                work / "api.log",
            ),
            (worker_command(python, args.worker), env, work / "worker.log"),
        ) as (bare_server, api, worker):
            print("waiting for the servers and the worker ...", flush=True)
            for url in urls.values():
                wait_until_up(url.removesuffix("/mcp") + "/")
            wait_for_worker(env)
            api_key = account(env["GEOSVC_BASE_URL"])
            pids = {"a": [bare_server.pid], "b": [worker.pid], "c": [api.pid, worker.pid]}
            asyncio.run(measure(urls, env, api_key, args, pids))


if __name__ == "__main__":
    main()
