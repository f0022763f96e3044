"""A bulk job of 100,000 geocode rows (a CSV upload to POST /v1/jobs) on this machine:
rows per second from the upload to the last row, and the CPU-ms per row of the api and
the worker (to set against bench/mcp_e2e.py's CPU-ms per interactive call).

One api (uvicorn) and two `geosvc worker`s as production runs them: the interactive
pool (tools and billing queues; prefork, one process per CPU, what production picks with
every tool embedded) and the jobs pool (queue `jobs`, niced, so the kernel gives
interactive calls the CPU first; prefork, one process per CPU, or --jobs-concurrency).
--one-worker: one worker takes every queue instead. The
machine's Redis under a throwaway prefix, a throwaway SQLite database: mcp_e2e.py's
set-up. The account is on the standard plan at its default bulk pace
(GEOSVC_STANDARD_JOB_ROWS_PER_S).

    .venv/bin/python bench/jobs.py [--rows 100000] [--calls 0] [--one-worker]\
        [--jobs-concurrency 0]

With --calls N, N interactive geocode calls over /v1 are timed alone first and then
again while the job runs (p50/p99): the job's effect on another tenant's calls.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_e2e import (  # noqa: E402  (bench/mcp_e2e.py)
    account,
    bench_env,
    cpu_seconds,
    processes,
    wait_for_worker,
    wait_until_up,
)
from metering import percentile, redis_for_bench  # noqa: E402  (bench/metering.py)

from app.kit.embedded_redis import free_port  # noqa: E402

PLACES = [
    "Paris", "Austin, TX", "Berlin", "Tokyo", "Nairobi", "Lima", "Oslo", "Denver",
    "Madrid", "Toronto", "Sydney", "Cairo", "Mumbai", "Seoul", "Dublin", "Boston",
    "Chicago", "Lisbon", "Prague", "Vienna", "Zurich", "Hamburg", "Osaka", "Quito",
    "10001", "94103", "SW1A 1AA", "75008", "Portland, OR", "Seattle", "Miami", "Atlanta",
]  # fmt: skip


def csv_body(rows: int) -> bytes:
    lines = ["query,limit"]
    lines += [f'"{PLACES[i % len(PLACES)]}",1' for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def interactive(base_url: str, key: str, calls: int) -> list[float]:
    """ms of `calls` geocode calls over /v1, one after another."""
    samples = []
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}) as http:
        for i in range(calls):
            started = time.perf_counter()
            http.get("/v1/geocode", params={"query": PLACES[i % len(PLACES)], "limit": 1})
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def run(
    base_url: str, key: str, victim_key: str, args: argparse.Namespace, pids: list[int]
) -> None:
    alone: list[float] = interactive(base_url, victim_key, args.calls) if args.calls else []
    body = csv_body(args.rows)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "text/csv"}
    during: list[float] = []
    with httpx.Client(base_url=base_url, headers=headers, timeout=300) as http:
        cpu_before, started = cpu_seconds(pids), time.monotonic()
        submitted = http.post("/v1/jobs?tool=geocode", content=body)
        submitted.raise_for_status()
        accepted_s = time.monotonic() - started
        job_id = submitted.json()["id"]
        victim = None
        if args.calls:
            victim = threading.Thread(
                target=lambda: during.extend(interactive(base_url, victim_key, args.calls))
            )
            victim.start()
        while True:
            job = http.get(f"/v1/jobs/{job_id}").json()
            if job["status"] != "working":
                break
            time.sleep(0.5)
        elapsed = time.monotonic() - started
        cpu = cpu_seconds(pids) - cpu_before
        if victim is not None:
            victim.join()
        read_started = time.monotonic()
        results = http.get(f"/v1/jobs/{job_id}/results")
        read_s = time.monotonic() - read_started
    print(f"jobs bench: {args.rows:,} geocode rows as a CSV upload, standard plan")
    print(f"  accepted (202) after      {accepted_s:7.2f} s (body {len(body) / 1e6:.1f} MB)")
    print(f"  status {job['status']}, rows with data {job['rowsWithData']:,}, "
          f"credits {job['credits']:,}")  # fmt: skip
    print(f"  upload to last row        {elapsed:7.2f} s = {args.rows / elapsed:,.0f} rows/s")
    print(f"  CPU (api + worker)        {cpu:7.2f} s = {cpu * 1000 / args.rows:.3f} CPU-ms/row")
    print(f"  results read (JSON lines) {read_s:7.2f} s, {len(results.content) / 1e6:.1f} MB")
    if args.calls:
        for label, samples in (("alone", alone), ("during the job", during)):
            print(
                f"  interactive /v1/geocode {label:15} p50 {percentile(samples, 0.5):6.1f} ms"
                f"  p99 {percentile(samples, 0.99):6.1f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=0)
    parser.add_argument("--one-worker", action="store_true", help="one worker, every queue")
    parser.add_argument(
        "--jobs-concurrency", type=int, default=0, help="the jobs pool's processes (0: per CPU)"
    )
    args = parser.parse_args()
    with redis_for_bench() as redis_url, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = bench_env(redis_url, work)
        api_port = free_port()
        env["GEOSVC_BASE_URL"] = base_url = f"http://127.0.0.1:{api_port}"
        python = sys.executable
        subprocess.run(
            [python, "-m", "app.cli", "migrate"], env=env, check=True, capture_output=True
        )
        uvicorn = [python, "-m", "uvicorn", "--log-level", "warning", "--host", "127.0.0.1"]
        worker = [python, "-m", "app.cli", "worker", "--loglevel", "warning"]
        jobs_pool = ["--queues", "jobs"]
        if args.jobs_concurrency:
            jobs_pool += ["--concurrency", str(args.jobs_concurrency)]
        pools = [["--queues", "tools,tools.free,tools.heavy,billing"], jobs_pool]
        with processes(
            (
                [*uvicorn, "--factory", "app.main:create_app", "--port", str(api_port)],
                env,
                work / "api.log",
            ),
            *(
                ([*worker, *queues], env, work / f"worker{i}.log")
                for i, queues in enumerate([[]] if args.one_worker else pools)
            ),
        ) as (api, *workers):
            print("waiting for the server and the workers ...", flush=True)
            wait_until_up(base_url + "/")
            wait_for_worker(env)
            key, victim_key = account(base_url), account(base_url)
            run(base_url, key, victim_key, args, [api.pid, *(w.pid for w in workers)])


if __name__ == "__main__":
    main()
