"""A bulk job of 100,000 geocode rows (a CSV upload to POST /v1/jobs) on this machine,
and what it does to another tenant's interactive calls, in one run:

- the victim: another account's sequential `geocode` calls over /v1, timed alone before
  the job, all through the job, and alone again after it (p50, p99; the ratio of p99
  during the job to p99 alone, both alone runs pooled: issue 59 asks for 1.5x at most);
- the job: rows per second from the upload to the last row, and CPU-ms per row by
  process: the jobs pool, the outbox drain (the bulk pool), the api's upload; set them
  against bench/mcp_e2e.py's CPU-ms per interactive call.

The production shape (docker-compose.yml, `geosvc dev`): one api (uvicorn) and three
`geosvc worker`s, the paying pool (`tools`; prefork, one process per CPU, what
production picks with every tool embedded), the bulk pool (`tools.free,tools.heavy,
billing`, niced: it drains the usage outbox) and the jobs pool (`jobs` alone, at
SCHED_IDLE: `geosvc worker` picks it). --jobs-nice N runs the jobs pool at niceness N
instead (the shape before SCHED_IDLE, for a comparison in one sitting); --one-worker: one
worker takes every queue. The machine's Redis under a throwaway prefix, a throwaway
SQLite database: mcp_e2e.py's set-up. The job's account is on the standard plan at its
default bulk pace (GEOSVC_STANDARD_JOB_ROWS_PER_S).

    .venv/bin/python bench/jobs.py [--rows 100000] [--calls 300] [--one-worker]\
        [--jobs-concurrency 0] [--jobs-nice N]

--calls 0 leaves the victim out (rows/s and CPU of the job alone).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_e2e import (  # noqa: E402  (bench/mcp_e2e.py)
    account,
    bench_env,
    celery_app_for,
    cpu_seconds,
    processes,
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
PAYING, BULK, JOBS = "tools", "tools.free,tools.heavy,billing", "jobs"


def csv_body(rows: int) -> bytes:
    lines = ["query,limit"]
    lines += [f'"{PLACES[i % len(PLACES)]}",1' for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


@dataclass
class Victim:
    """Another account's geocode calls over /v1, one after another: `calls` of them, or
    until `stop` is set."""

    base_url: str
    key: str
    samples: list[float] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self, calls: int | None = None) -> list[float]:
        headers = {"Authorization": f"Bearer {self.key}"}
        samples: list[float] = []
        with httpx.Client(base_url=self.base_url, headers=headers, timeout=30) as http:
            i = 0
            while (calls is None and not self.stop.is_set()) or (calls is not None and i < calls):
                started = time.perf_counter()
                answer = http.get("/v1/geocode", params={"query": PLACES[i % len(PLACES)]})
                samples.append((time.perf_counter() - started) * 1000)
                answer.raise_for_status()
                i += 1
        return samples


def wait_for_workers(env: dict[str, str], count: int, deadline_s: float = 120) -> None:
    app = celery_app_for(env)
    deadline = time.monotonic() + deadline_s
    while len(app.control.ping(timeout=1.0)) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"fewer than {count} workers answered a ping")


def outbox_drained(env: dict[str, str], deadline_s: float = 300) -> None:
    """Wait until the drain has moved every usage event into the ledger (its CPU is the
    job's too)."""
    store = redis.Redis.from_url(env["GEOSVC_REDIS_URL"])
    key = f"{env['GEOSVC_REDIS_KEY_PREFIX']}usage:outbox"
    deadline = time.monotonic() + deadline_s
    while store.llen(key) and time.monotonic() < deadline:
        time.sleep(0.2)
    store.close()


def run(
    base_url: str,
    env: dict[str, str],
    keys: tuple[str, str],
    args: argparse.Namespace,
    pids: dict[str, list[int]],
) -> None:
    key, victim_key = keys
    victim = Victim(base_url, victim_key)
    if args.calls:
        victim.run(20)  # warm: connections, caches
    alone = victim.run(args.calls) if args.calls else []
    body = csv_body(args.rows)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "text/csv"}
    during: list[float] = []
    with httpx.Client(base_url=base_url, headers=headers, timeout=300) as http:
        cpu_before = {name: cpu_seconds(group) for name, group in pids.items()}
        started = time.monotonic()
        submitted = http.post("/v1/jobs?tool=geocode", content=body)
        submitted.raise_for_status()
        accepted_s = time.monotonic() - started
        upload_cpu = cpu_seconds(pids["api"]) - cpu_before["api"]
        job_id = submitted.json()["id"]
        thread = None
        if args.calls:
            thread = threading.Thread(target=lambda: during.extend(victim.run()))
            thread.start()
        while True:
            job = http.get(f"/v1/jobs/{job_id}").json()
            if job["status"] != "working":
                break
            time.sleep(0.2)
        elapsed = time.monotonic() - started
        victim.stop.set()
        if thread is not None:
            thread.join()
        outbox_drained(env)
        cpu = {name: cpu_seconds(group) - cpu_before[name] for name, group in pids.items()}
        read_started = time.monotonic()
        results = http.get(f"/v1/jobs/{job_id}/results")
        read_s = time.monotonic() - read_started
    victim.stop.clear()
    after = victim.run(args.calls) if args.calls else []
    report(args, job, body, accepted_s, elapsed, upload_cpu, cpu, read_s, len(results.content))
    if args.calls:
        print(f"  victim: another account's /v1/geocode, sequential ({args.calls} calls alone,")
        print("          before and after the job; every call while it runs)")
        for label, samples in (("alone before", alone), ("during the job", during),
                               ("alone after", after)):  # fmt: skip
            print(
                f"    {label:15} {len(samples):6,} calls  p50 {percentile(samples, 0.5):6.1f} ms"
                f"  p99 {percentile(samples, 0.99):6.1f} ms"
            )
        p99_alone = percentile(alone + after, 0.99)
        p99_during = percentile(during, 0.99)
        print(
            f"  victim p99 during / alone (both alone runs) = {p99_during:.1f} / "
            f"{p99_alone:.1f} ms = {p99_during / p99_alone:.2f}x (goal <= 1.5x)"
        )


def report(
    args: argparse.Namespace,
    job: dict[str, object],
    body: bytes,
    accepted_s: float,
    elapsed: float,
    upload_cpu: float,
    cpu: dict[str, float],
    read_s: float,
    results_bytes: int,
) -> None:
    rows = args.rows
    print(f"jobs bench: {rows:,} geocode rows as a CSV upload, standard plan, {shape(args)}")
    print(f"  accepted (202) after      {accepted_s:7.2f} s (body {len(body) / 1e6:.1f} MB)")
    print(f"  status {job['status']}, rows with data {job['rowsWithData']:,}, "
          f"credits {job['credits']:,}")  # fmt: skip
    print(f"  upload to last row        {elapsed:7.2f} s = {rows / elapsed:,.0f} rows/s")
    total = sum(cpu.values())
    print(f"  CPU, every process        {total:7.2f} s = {total * 1000 / rows:.3f} CPU-ms/row"
          " (the victim's calls included)")  # fmt: skip
    if "jobs" in cpu:
        per_row = {
            "jobs pool": cpu["jobs"],
            "drain (bulk pool)": cpu["bulk"],
            "api upload": upload_cpu,
        }
        job_cpu = sum(per_row.values())
        parts = ", ".join(f"{name} {value * 1000 / rows:.3f}" for name, value in per_row.items())
        print(f"  CPU of the job            {job_cpu:7.2f} s = {job_cpu * 1000 / rows:.3f}"
              f" CPU-ms/row: {parts}")  # fmt: skip
    print(f"  results read (JSON lines) {read_s:7.2f} s, {results_bytes / 1e6:.1f} MB")


def shape(args: argparse.Namespace) -> str:
    if args.one_worker:
        return "one worker for every queue"
    if args.jobs_nice is not None:
        return f"jobs pool at niceness {args.jobs_nice}"
    return "jobs pool at SCHED_IDLE"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=300, help="victim calls alone (0: none)")
    parser.add_argument("--one-worker", action="store_true", help="one worker, every queue")
    parser.add_argument(
        "--jobs-concurrency", type=int, default=0, help="the jobs pool's processes (0: per CPU)"
    )
    parser.add_argument(
        "--jobs-nice", type=int, default=None, help="the jobs pool niced, not SCHED_IDLE"
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
        jobs_pool = ["--queues", JOBS]
        if args.jobs_concurrency:
            jobs_pool += ["--concurrency", str(args.jobs_concurrency)]
        if args.jobs_nice is not None:
            jobs_pool += ["--no-idle", "--nice", str(args.jobs_nice)]
        pools = {"paying": ["--queues", PAYING], "bulk": ["--queues", BULK], "jobs": jobs_pool}
        if args.one_worker:
            pools = {"worker": []}
        with processes(
            (
                [*uvicorn, "--factory", "app.main:create_app", "--port", str(api_port)],
                env,
                work / "api.log",
            ),
            *(([*worker, *queues], env, work / f"{name}.log") for name, queues in pools.items()),
        ) as (api, *workers):
            print("waiting for the server and the workers ...", flush=True)
            wait_until_up(base_url + "/", deadline_s=300)  # four processes start at once
            wait_for_workers(env, len(pools))
            keys = account(base_url), account(base_url)
            pids = {"api": [api.pid]}
            pids.update({name: [w.pid] for name, w in zip(pools, workers, strict=True)})
            run(base_url, env, keys, args, pids)


if __name__ == "__main__":
    main()
