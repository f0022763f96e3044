"""How long a new worker takes from its start to its first answered tool call: what a
scale-up costs (docs/DEPLOYMENT.md, "Capacity").

  prebuilt  the indices are already there (in the image, or a read-only volume built
            once per release): `geosvc worker` starts, loads them, answers
  build     the pod builds them first (the init container the manifests used to have):
            `geosvc data build` into an empty directory, then the same start

One `tools.run` geocode task waits in the queue before the worker starts; the clock runs
from the first process's start to that task's answer (and, for `build`, the build's CPU
time and peak RSS). A worker of the `tools` queue, prefork, --concurrency 1 (a pod's
pool on a 2-core machine shared by others); the machine's Redis (or an embedded one)
under a throwaway key prefix, a throwaway SQLite database.

    .venv/bin/python bench/worker_start.py [--mode prebuilt|build|both] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_e2e import bench_env, celery_app_for  # noqa: E402  (bench/mcp_e2e.py)
from metering import redis_for_bench  # noqa: E402  (bench/metering.py)

from app.tool_calls.service import RUN_TOOL_TASK  # noqa: E402

GEOSVC = str(Path(sys.executable).with_name("geosvc"))
FIRST_CALL = ("geocode", {"query": "Austin, TX", "limit": 1})


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(data_dir: Path, env: dict[str, str], log: Path) -> tuple[float, float, float]:
    """`geosvc data build` into `data_dir`: (wall s, CPU s, peak RSS GB)."""
    cpu_before = children_cpu_s()
    started = time.monotonic()
    with log.open("wb") as out:
        done = subprocess.run(
            [GEOSVC, "data", "build", "--data-dir", str(data_dir)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"the build failed: {log}")
    wall = time.monotonic() - started
    # ru_maxrss of the children is the largest of any one child so far, in KiB
    peak_gb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2
    return wall, children_cpu_s() - cpu_before, peak_gb


def first_answer(env: dict[str, str], log: Path, deadline_s: float = 600) -> float:
    """Seconds from `geosvc worker`'s start to the answer of a task queued before it."""
    app = celery_app_for(env)
    result = app.send_task(RUN_TOOL_TASK, args=list(FIRST_CALL), queue="tools")
    started = time.monotonic()
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [GEOSVC, "worker", "--queues", "tools", "--concurrency", "1"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            answer = result.get(timeout=deadline_s)
            elapsed = time.monotonic() - started
        finally:
            worker.terminate()
            worker.wait(timeout=60)
    if "results" not in answer and "error" in answer:
        raise RuntimeError(f"the first call failed: {answer}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("prebuilt", "build", "both"), default="both")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with redis_for_bench() as redis_url, tempfile.TemporaryDirectory() as work_dir:
        work = Path(work_dir)
        env = bench_env(redis_url, work)
        env["GEOSVC_WORKER_METRICS_PORT"] = "0"
        subprocess.run([GEOSVC, "migrate"], env=env, check=True, capture_output=True)
        print(f"worker start to first answered call ({args.runs} runs each)")
        if args.mode in ("prebuilt", "both"):
            times = [first_answer(env, work / f"worker-prebuilt-{n}.log") for n in range(args.runs)]
            print(
                f"  prebuilt indices ({env['GEOSVC_DATA_DIR']}): median "
                f"{statistics.median(times):6.1f} s  (runs: {', '.join(f'{t:.1f}' for t in times)})"
            )
        if args.mode in ("build", "both"):
            totals = []
            for n in range(args.runs):
                data_dir = work / f"data-{n}"
                build_env = {**env, "GEOSVC_DATA_DIR": str(data_dir)}
                wall, cpu, peak = build(data_dir, build_env, work / f"build-{n}.log")
                start = first_answer(build_env, work / f"worker-build-{n}.log")
                totals.append(wall + start)
                print(
                    f"  build then start, run {n + 1}: build {wall:6.1f} s wall, {cpu:6.1f} s CPU,"
                    f" peak RSS {peak:4.2f} GB; start {start:5.1f} s; total {wall + start:6.1f} s"
                )
                subprocess.run(["rm", "-rf", str(data_dir)], check=True)
            print(f"  build then start: median {statistics.median(totals):6.1f} s")
        print(f"  load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
