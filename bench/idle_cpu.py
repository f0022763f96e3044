"""CPU an idle service burns: every process's CPU-seconds over a quiet window.

Two setups, each started here from a checkout and measured alone:

  dev    `geosvc dev` (the api, its two workers, beat and the embedded redis-server, all
         children of one process)
  split  `geosvc api` + `geosvc worker` (its default pool: prefork, one process per CPU)
         + `geosvc beat` against the local Redis (127.0.0.1:6379, or an embedded one)
         under a throwaway key prefix

Each gets a temporary data directory (SQLite database, secrets, beat schedule, worker
heartbeat file) whose `indices` is a link to the checkout's prebuilt `.geosvc/indices`.
After start-up: a few tool calls (/v1/geocode with a standard-plan key made through the
control plane), --settle seconds for their drains to finish, then utime+stime (and the
reaped children's) of every process of the tree from /proc/<pid>/stat at t0 and at
t0 + --seconds. Then --calls sequential /v1/geocode calls through the worker (p50, p99),
so a change that saves idle CPU can be seen not to slow calls down.

--ref <checkout> runs the same from another checkout (with its own .venv/bin/python and
indices) and prints both side by side, --runs rounds of ref, this, then this, ref, ...
The window's CPU includes nothing of the bench's (it reads /proc only at t0 and t1), and
the processes are alone on their Redis key prefix.

    .venv/bin/python bench/idle_cpu.py [--seconds 60] [--runs 1] [--setups dev,split]
        [--calls 300] [--ref ../geosvc-base]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from drill_stack import geodata_dir  # noqa: E402  (bench/drill_stack.py)
from mcp_e2e import account, wait_until_up  # noqa: E402  (bench/mcp_e2e.py)
from metering import bench_prefix, percentile, redis_for_bench  # noqa: E402  (bench/metering.py)

from app.kit.embedded_redis import free_port  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'
    return text.rsplit(")", 1)[1].split()


def tree(root: int) -> list[int]:
    """`root` and its descendants (one scan of /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := stat_fields(int(entry.name))) is not None:
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, ()))
    return found


def cpu_s(pid: int) -> float | None:
    """utime + stime of `pid` and of its reaped children, in seconds."""
    fields = stat_fields(pid)
    if fields is None:
        return None
    # after the ')': state=0 ppid=1 ... utime=11 stime=12 cutime=13 cstime=14
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS


def label(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    words = [w.decode(errors="replace") for w in argv if w]
    if words and words[0].endswith("redis-server"):
        return "redis-server"
    if "app.cli" in words:
        rest = words[words.index("app.cli") + 1 :]
        queues = rest[rest.index("--queues") + 1] if "--queues" in rest else ""
        return " ".join(filter(None, [rest[0] if rest else "?", queues]))
    return Path(words[0]).name if words else "?"


def snapshot(roots: dict[str, int]) -> dict[int, tuple[str, float]]:
    taken: dict[int, tuple[str, float]] = {}
    for name, root in roots.items():
        for depth, pid in enumerate(tree(root)):
            value = cpu_s(pid)
            if value is not None:
                taken[pid] = (name if depth == 0 else f"{name} > {label(pid)}", value)
    return taken


@dataclass
class Result:
    per_process: dict[str, float]  # label (pid) -> CPU-seconds in the window
    total: float
    latencies_ms: list[float]


@contextlib.contextmanager
def started(
    commands: dict[str, list[str]], env: dict[str, str], cwd: Path, logs: Path
) -> Iterator[dict[str, int]]:
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name, argv in commands.items():
            processes[name] = subprocess.Popen(
                argv,
                env=env,
                cwd=cwd,
                stdout=(logs / f"{name}.log").open("wb"),
                stderr=subprocess.STDOUT,
            )
        yield {name: process.pid for name, process in processes.items()}
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def geocode_calls(base_url: str, key: str, count: int) -> list[float]:
    samples = []
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}) as http:
        for _ in range(count):
            began = time.perf_counter()
            answer = http.get("/v1/geocode", params={"query": "Austin, TX", "limit": 1})
            answer.raise_for_status()
            samples.append((time.perf_counter() - began) * 1000)
    return samples


def base_env(work: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}
    env.update(
        GEOSVC_DATA_DIR=str(work),
        GEOSVC_DATABASE_URL=f"sqlite:///{work / 'idle.db'}",
        GEOSVC_SECRET_PEPPER="bench-pepper",
        GEOSVC_BASE_URL=f"http://127.0.0.1:{port}",
        GEOSVC_WORKER_HEARTBEAT_FILE=str(work / "worker.alive"),
        GEOSVC_STANDARD_RATE_PER_S="1000000",
        GEOSVC_STANDARD_BURST="1000000",
        C_FORCE_ROOT="1",
    )
    return env


def wait_for_log(path: Path, pattern: str, deadline_s: float = 120) -> None:
    deadline = time.monotonic() + deadline_s
    while not re.search(pattern, path.read_text(errors="replace") if path.exists() else ""):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path.name}: no {pattern!r} within {deadline_s} s")
        time.sleep(0.2)


def run(checkout: Path, setup: str, args: argparse.Namespace, redis_url: str) -> Result:
    python = str(checkout / ".venv/bin/python")
    indices = checkout / ".geosvc/indices"
    if not indices.is_dir():
        indices = geodata_dir() / "indices"  # this checkout's, built first when missing
    with tempfile.TemporaryDirectory(prefix="idle-cpu-") as tmp:
        work = Path(tmp)
        (work / "indices").symlink_to(indices.resolve())
        port = free_port()
        env = base_env(work, port)
        cli = [python, "-m", "app.cli"]
        if setup == "dev":
            commands = {"dev": [*cli, "dev", "--port", str(port)]}
        else:
            env.update(
                GEOSVC_REDIS_URL=redis_url,
                GEOSVC_REDIS_KEY_PREFIX=bench_prefix("idle"),
            )
            migrate = [*cli, "migrate"]
            subprocess.run(migrate, env=env, cwd=checkout, check=True, capture_output=True)
            commands = {
                "api": [*cli, "api", "--port", str(port)],
                "worker": [*cli, "worker", "--loglevel", "warning"],
                "beat": [*cli, "beat", "--loglevel", "warning"],
            }
        with started(commands, env, checkout, work) as roots:
            wait_until_up(env["GEOSVC_BASE_URL"] + "/", deadline_s=180)
            if setup == "dev":
                wait_for_log(work / "dev.log", r"Demo key")
            key = account(env["GEOSVC_BASE_URL"])
            geocode_calls(env["GEOSVC_BASE_URL"], key, args.warmup_calls)
            time.sleep(args.settle)  # the drain requests of the warm-up calls, and beat's
            before = snapshot(roots)
            time.sleep(args.seconds)
            after = snapshot(roots)
            latencies = geocode_calls(env["GEOSVC_BASE_URL"], key, args.calls)
        per_process: dict[str, float] = {}
        for pid, (name, value) in after.items():
            per_process[f"{name} ({pid})"] = value - before.get(pid, (name, 0.0))[1]
        gone = [pid for pid in before if pid not in after]
        for pid in gone:  # exited in the window: its CPU after t0 is unknown
            per_process[f"{before[pid][0]} ({pid}, exited)"] = float("nan")
        total = sum(v for v in per_process.values() if v == v)
        return Result(per_process, total, latencies)


def show(name: str, result: Result, seconds: float) -> None:
    print(f"  {name}: {result.total:.3f} CPU-s in {seconds:g} s ({result.total / seconds:.2%})")
    for process, value in sorted(result.per_process.items()):
        print(f"      {value:7.3f}  {process}")
    if result.latencies_ms:
        samples = result.latencies_ms
        print(
            f"      /v1/geocode x{len(samples)}: p50 {statistics.median(samples):.2f} ms"
            f"  p99 {percentile(samples, 0.99):.2f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--setups", default="dev,split")
    parser.add_argument("--warmup-calls", type=int, default=5)
    parser.add_argument("--calls", type=int, default=0, help="sequential calls after the window")
    parser.add_argument("--ref", type=Path, help="another checkout, measured alternately")
    args = parser.parse_args()
    checkouts = {"this": ROOT}
    if args.ref is not None:
        checkouts = {"ref": args.ref.resolve(), "this": ROOT}
    totals: dict[tuple[str, str], list[float]] = {}
    p50s: dict[tuple[str, str], list[float]] = {}
    with redis_for_bench() as redis_url:
        for round_ in range(1, args.runs + 1):
            for setup in args.setups.split(","):
                # The order alternates: the second of two back-to-back runs measured
                # ~1.2 ms slower per call even with the same checkout on both sides.
                order = list(checkouts.items())
                for name, checkout in order if round_ % 2 else order[::-1]:
                    result = run(checkout, setup, args, redis_url)
                    print(f"round {round_}, {setup}, {name} ({checkout})", flush=True)
                    show(name, result, args.seconds)
                    totals.setdefault((setup, name), []).append(result.total)
                    if result.latencies_ms:
                        p50s.setdefault((setup, name), []).append(
                            statistics.median(result.latencies_ms)
                        )
    print(f"idle CPU-seconds over {args.seconds:g} s, every run:")
    for (setup, name), values in totals.items():
        runs = "  ".join(f"{v:6.3f}" for v in values)
        latency = "  ".join(f"{v:.2f}" for v in p50s.get((setup, name), []))
        print(f"  {setup:<6} {name:<5} {runs}" + (f"   p50 ms: {latency}" if latency else ""))


if __name__ == "__main__":
    main()
