"""CPU per tool call, by process: what one call costs the api, the worker and Redis.

Starts one uvicorn api and one `geosvc worker --pool solo` (the local Redis under a
throwaway prefix, a throwaway SQLite database), then makes --calls sequential calls of
each kind and reads each process's CPU time from /proc before and after:

  ok        a free account's successful `geocode`
  refused   a call refused at admission (the account at its free quota): what a flood
            of refused calls costs the api

Sequential calls, so the figures are per call, not per second of a busy machine.

--baseline DIR starts a second api and worker from another checkout (e.g. `git worktree
add /tmp/base main`, run with this venv) and alternates blocks of --block calls between
the two, so both see the same machine load; it prints both and their ratio.

    .venv/bin/python bench/call_cpu.py [--calls 500] [--baseline DIR] [--block 50]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from drill_stack import geodata_dir  # noqa: E402  (bench/drill_stack.py)
from mcp_e2e import AS_GEOSVC_API, wait_until_up  # noqa: E402
from metering import bench_prefix, redis_for_bench  # noqa: E402

from app.kit.clock import period_of, utcnow  # noqa: E402
from app.kit.embedded_redis import free_port  # noqa: E402

CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "geocode", "arguments": {"query": "Denver"}},
}
KINDS = ("ok", "refused")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Stack:
    """One api and its worker, started from the checkout `tree`."""

    label: str
    base: str
    pids: dict[str, int]
    post: Callable[[], str]
    block_to_quota: Callable[[], None]
    # per kind: calls made, seconds, CPU seconds by process
    totals: dict[str, list[float]] = field(default_factory=dict)

    def run(self, kind: str, calls: int) -> str:
        before = {name: cpu_s(pid) for name, pid in self.pids.items()}
        started = time.perf_counter()
        for _ in range(calls):
            outcome = self.post()
        elapsed = time.perf_counter() - started
        spent = [cpu_s(pid) - before[name] for name, pid in self.pids.items()]
        total = self.totals.setdefault(kind, [0.0, 0.0, *[0.0] * len(self.pids)])
        for index, value in enumerate([calls, elapsed, *spent]):
            total[index] += value
        return outcome

    def report(self, kind: str) -> str:
        calls, elapsed, *spent = self.totals[kind]
        parts = "  ".join(
            f"{name} {cpu * 1000 / calls:5.2f}" for name, cpu in zip(self.pids, spent, strict=True)
        )
        return f"{elapsed * 1000 / calls:6.2f} ms/call   CPU ms/call: {parts}"

    def api_cpu_ms(self, kind: str) -> float:
        calls, _elapsed, api, *_ = self.totals[kind]
        return api * 1000 / calls


@contextlib.contextmanager
def stack(label: str, tree: Path, redis_url: str, tmp: Path) -> Iterator[Stack]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    prefix = bench_prefix()
    env = {
        **os.environ,
        "GEOSVC_REDIS_URL": redis_url,
        "GEOSVC_REDIS_KEY_PREFIX": prefix,
        "GEOSVC_DATABASE_URL": f"sqlite:///{tmp / f'{label}.db'}",
        "GEOSVC_DATA_DIR": str(geodata_dir()),  # built first when missing
        "GEOSVC_SECRET_PEPPER": "bench-pepper-" + "x" * 20,
        "GEOSVC_BASE_URL": base,
        "GEOSVC_LOG_LEVEL": "WARNING",
        "GEOSVC_FREE_QUOTA": "1000000",
        "GEOSVC_FREE_RATE_PER_S": "1000000",
        "GEOSVC_FREE_BURST": "1000000",
        # one client refused back to back would have its connection held (app/http/server.py):
        # this measures what each refusal costs, not how many a held client can send
        "GEOSVC_HTTP_REFUSED_HOLD_MAX_S": "0",
        "C_FORCE_ROOT": "1",
    }
    python = sys.executable
    # cwd: `python -m` imports `app` from that checkout
    subprocess.run([python, "-m", "app.cli", "migrate"], env=env, check=True, cwd=tree)
    subprocess.run([python, "-m", "app.cli", "data", "build"], env=env, check=True, cwd=tree)
    api = subprocess.Popen(
        [python, "-m", "uvicorn", *AS_GEOSVC_API, "app.main:create_app", "--port", str(port),
         "--log-level", "warning"], env=env, cwd=tree,
    )  # fmt: skip
    worker = subprocess.Popen(
        [python, "-m", "app.cli", "worker", "--pool", "solo", "--loglevel", "warning"],
        env=env,
        cwd=tree,
    )
    store = redis.Redis.from_url(redis_url)
    try:
        wait_until_up(base + "/")
        http = httpx.Client(base_url=base, timeout=30)
        email = f"bench-{secrets.token_hex(4)}@example.com"
        signed_up = http.post("/auth/signup", json={"email": email, "password": "bench-pw-1"})
        key = http.post("/api-keys", json={"name": "bench"}).json()["plaintext"]
        accept = "application/json, text/event-stream"
        headers = {"Authorization": f"Bearer {key}", "Accept": accept}
        client = httpx.Client(timeout=60)

        def post() -> str:
            result = client.post(base + "/mcp", json=CALL, headers=headers).json()["result"]
            return str(result["structuredContent"].get("error", {}).get("code", "ok"))

        def block_to_quota() -> None:
            user_id = signed_up.json()["userId"]
            counter = f"{prefix}usage:{{{user_id}}}:{period_of(utcnow())}"
            store.hset(counter, "used", 1_000_000)  # at the quota: refused at admission

        deadline = time.monotonic() + 60
        while post() != "ok":  # the worker is up
            assert time.monotonic() < deadline, "the worker never answered"
            time.sleep(0.2)
        for _ in range(20):  # warm
            post()
        pids = {"api": api.pid, "worker": worker.pid, "redis": int(store.info()["process_id"])}
        yield Stack(label, base, pids, post, block_to_quota)
    finally:
        api.terminate()
        worker.terminate()
        api.wait()
        worker.wait()
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--baseline", type=Path, help="another checkout, run side by side")
    parser.add_argument("--block", type=int, default=50, help="calls per turn, side by side")
    args = parser.parse_args()
    trees = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    with (
        redis_for_bench() as redis_url,
        tempfile.TemporaryDirectory() as tmp,
        contextlib.ExitStack() as started,
    ):
        stacks = [started.enter_context(stack(n, t, redis_url, Path(tmp))) for n, t in trees]
        print(f"CPU per call, {args.calls} sequential calls of each kind per checkout")
        for kind in KINDS:
            if kind == "refused":
                for each in stacks:
                    each.block_to_quota()
            done = 0
            while done < args.calls:
                turn = min(args.block, args.calls - done)
                outcomes = {each.label: each.run(kind, turn) for each in stacks}
                done += turn
            for each in stacks:
                print(f"  {kind:8} {each.label:8} {each.report(kind)}   ({outcomes[each.label]})")
            if len(stacks) == 2:
                this, baseline = (each.api_cpu_ms(kind) for each in stacks)
                print(f"  {kind:8} api CPU this/baseline: {this / baseline:.2f}x "
                      f"({this - baseline:+.2f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
