"""Where one tool call's CPU goes, in the api and in the worker, by stage.

Starts `geosvc api` (uvicorn) and `geosvc worker` as in bench/mcp_e2e.py (the local Redis
under a throwaway prefix, a throwaway SQLite database, a standard-plan account), warms
up, then makes --calls sequential `geocode` calls through /mcp with the official client
while py-spy samples both processes (and the worker's pool children). It prints:

- CPU-ms per call of each process, from /proc (utime + stime over the window);
- each process's samples by stage (the first rule, in STAGES' order, that matches a
  frame of the sample's stack), as a share and as CPU-ms per call.

py-spy counts only threads on the CPU (not idle ones), so a stage's share of the samples
is its share of the CPU. Needs py-spy (`.venv/bin/pip install py-spy`) and ptrace.

    .venv/bin/python bench/call_profile.py [--calls 2000] [--rate 250] [--tool-task-events]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_e2e import (  # noqa: E402  (bench/mcp_e2e.py)
    AS_GEOSVC_API,
    account,
    bench_env,
    mcp_client_factory,
    processes,
    wait_for_worker,
    wait_until_up,
)
from metering import redis_for_bench  # noqa: E402

from app.kit.embedded_redis import free_port  # noqa: E402

# (stage, substrings of a frame, any of which puts a sample in the stage): the frame
# nearest the leaf that matches names the sample's stage (`_stage_of`).
API_STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("auth: key or token lookup", ("api_keys/verify.py", "mcp/auth.py", "oauth/")),
    ("validation", ("validate_arguments", "validation.py")),
    ("entitlements", ("billing/entitlements.py",)),
    ("reservation (Redis)", ("reserve (app/metering", "run_admission")),
    ("enqueue (Celery send_task)", ("send_task",)),
    ("result wait (pub/sub reader)", ("queue/replies.py",)),
    ("commit + outbox + request log", ("send_commit", "metering/outbox.py", "request_log/")),
    ("release", ("release (app/metering",)),
    ("tool result: summary, MCP result", ("mcp/tool_results.py", "summary (app/geodata/tools/")),
    ("metrics and logs", ("observability/", "logging/")),
    ("edge admission (body peek)", ("mcp/admission.py",)),
    ("our ASGI guards", ("http/guards.py", "http/security.py")),
    ("MCP SDK (JSON-RPC, pydantic, transport)", ("mcp/server/", "mcp/shared/", "mcp_types")),
    ("Starlette / FastAPI routing", ("starlette/", "fastapi/")),
    ("HTTP server (uvicorn, h11/httptools)", ("uvicorn/", "h11/", "httptools")),
    ("redis client", ("redis/",)),
    ("event loop", ("asyncio/", "anyio/")),
]
GENERIC = {"redis client", "event loop", "Celery worker loop", "kombu / broker messages"}
WORKER_STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("task events (Flower)", ("send_event", "celery/events/", "task_sent_handler")),
    ("the lookup (geodata.execute)", ("geodata/",)),
    ("result store (Redis backend)", ("celery/backends/",)),
    ("outbox drain (billing)", ("metering/outbox.py", "metering/ledger.py", "sqlalchemy/")),
    ("our signals (logs, metrics)", ("observability/", "logging/")),
    ("Celery task trace", ("celery/app/trace.py",)),
    ("kombu / broker messages", ("kombu/",)),
    ("redis client", ("redis/",)),
    ("Celery worker loop", ("celery/",)),
]


def cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and its live descendants (the worker's pool children)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for each in [pid, *descendants(pid)]:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for task in Path(f"/proc/{parent}/task").glob("*/children"):
            for child in task.read_text().split():
                found.append(int(child))
                frontier.append(int(child))
    return found


def by_stage(raw: Path, stages: list[tuple[str, tuple[str, ...]]]) -> dict[str, int]:
    """Samples per stage from py-spy's raw (collapsed) output: `frame;frame;... count`."""
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        counts[_stage_of(frames, stages)] += int(count)
    return counts


def _stage_of(frames: list[str], stages: list[tuple[str, tuple[str, ...]]]) -> str:
    """From the leaf up, the first frame that belongs to a stage names it; the generic
    stages (a client library, the event loop) only when no caller up the stack is ours."""
    specific = [(name, needles) for name, needles in stages if name not in GENERIC]
    generic = [(name, needles) for name, needles in stages if name in GENERIC]
    for group in (specific, generic):
        for frame in reversed(frames):  # py-spy writes the root first
            for stage, needles in group:
                if any(needle in frame for needle in needles):
                    return stage
    return "other"


def print_stages(
    title: str, cpu_ms_per_call: float, counts: dict[str, int], stages: list[tuple[str, tuple]]
) -> None:
    total = sum(counts.values()) or 1
    print(f"\n{title}: {cpu_ms_per_call:.2f} CPU-ms per call ({total} samples)")
    for stage in [*(name for name, _ in stages), "other"]:
        share = counts.get(stage, 0) / total
        if share:
            print(f"  {stage:<44} {share * 100:5.1f} %  {share * cpu_ms_per_call:6.3f} ms")


async def sequential_calls(url: str, api_key: str, calls: int, gate: Path) -> None:
    """The client (its own process, so its CPU is not the api's): warm up, say "warm",
    wait for "go", make `calls` calls, say "done"."""
    factory = mcp_client_factory(
        url, {"Authorization": f"Bearer {api_key}"}, "geocode", {"query": "Austin, TX"}
    )
    async for call in factory():
        for _ in range(200):
            await call()
        gate.write_text("warm")
        while gate.read_text() != "go":
            await asyncio.sleep(0.01)
        for _ in range(calls):
            await call()
        gate.write_text("done")


def wait_for(gate: Path, word: str, deadline_s: float = 300) -> None:
    deadline = time.monotonic() + deadline_s
    while not (gate.exists() and gate.read_text() == word):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the client never said {word!r}")
        time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument(
        "--tool-task-events",
        action="store_true",
        help="run the worker with GEOSVC_TOOL_TASK_EVENTS=1 (what Flower turns on)",
    )
    parser.add_argument("--keep", type=Path, help="copy py-spy's raw samples to this folder")
    args = parser.parse_args()
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    with redis_for_bench() as redis_url, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        api_port = free_port()
        env = bench_env(
            redis_url,
            work,
            GEOSVC_BASE_URL=f"http://127.0.0.1:{api_port}",
            GEOSVC_TOOL_TASK_EVENTS="1" if args.tool_task_events else "0",
        )
        python = sys.executable
        subprocess.run([python, "-m", "app.cli", "migrate"], env=env, check=True)
        uvicorn = [python, "-m", "uvicorn", "--log-level", "warning", "--host", "127.0.0.1"]
        api_cmd = [*uvicorn, *AS_GEOSVC_API, "app.main:create_app", "--port", str(api_port)]
        # One pool process: its samples and CPU are one call's worth, not split by fork.
        worker_cmd = [python, "-m", "app.cli", "worker", "--loglevel", "warning"]
        worker_cmd += ["--pool", "prefork", "--concurrency", "1"]
        with processes(
            (api_cmd, env, work / "api.log"), (worker_cmd, env, work / "worker.log")
        ) as started:
            api, worker = started
            wait_until_up(f"http://127.0.0.1:{api_port}/")
            wait_for_worker(env)
            api_key = account(env["GEOSVC_BASE_URL"])
            gate = work / "gate"
            client = subprocess.Popen(
                [python, __file__, "--client", f"http://127.0.0.1:{api_port}/mcp", api_key,
                 str(args.calls), str(gate)],
                env=env,
            )  # fmt: skip
            wait_for(gate, "warm")
            pids = {"api": api.pid, "worker": worker.pid}
            spies = [
                subprocess.Popen(
                    [
                        py_spy,
                        "record",
                        "--format",
                        "raw",
                        "--rate",
                        str(args.rate),
                        "--subprocesses",
                        "--nonblocking",
                        "--pid",
                        str(pid),
                        "--output",
                        str(work / f"{name}.txt"),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
                for name, pid in pids.items()
            ]
            time.sleep(2.0)  # py-spy attaches (no calls meanwhile: idle is not sampled)
            before = {name: cpu_seconds(pid) for name, pid in pids.items()}
            gate.write_text("go")
            wait_for(gate, "done")
            after = {name: cpu_seconds(pid) for name, pid in pids.items()}
            client.wait(timeout=60)
            for spy in spies:
                spy.send_signal(signal.SIGINT)  # py-spy writes its output and exits
                spy.wait(timeout=60)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for name in ("api", "worker"):
                shutil.copy(work / f"{name}.txt", args.keep / f"{name}.txt")
        print(
            f"call profile: geocode via /mcp, {args.calls} sequential calls, "
            f"tool task events {'on' if args.tool_task_events else 'off'}"
        )
        for name, stages in (("api", API_STAGES), ("worker", WORKER_STAGES)):
            per_call = (after[name] - before[name]) * 1000 / args.calls
            print_stages(name, per_call, by_stage(work / f"{name}.txt", stages), stages)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        asyncio.run(sequential_calls(sys.argv[2], sys.argv[3], int(sys.argv[4]), Path(sys.argv[5])))
    else:
        main()
