"""CPU per tool call, by process: what one call costs the api, the worker and Redis.

Starts one uvicorn api and one `geosvc worker --pool solo` (the local Redis under a
throwaway prefix, a throwaway SQLite database), then makes --calls sequential calls of
each kind and reads each process's CPU time from /proc before and after:

  ok        a free account's successful `geocode`
  refused   a call refused at admission (the account at its free quota): what a flood
            of refused calls costs the api

Sequential calls, so the figures are per call, not per second of a busy machine.

    .venv/bin/python bench/call_cpu.py [--calls 500]
"""

from __future__ import annotations

import argparse
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mcp_e2e import wait_until_up  # noqa: E402
from metering import redis_for_bench  # noqa: E402

from app.clock import period_of, utcnow  # noqa: E402
from app.embedded_redis import free_port  # noqa: E402

CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "geocode", "arguments": {"query": "Denver"}},
}


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(label: str, calls: int, post: Callable[[], str], pids: dict[str, int]) -> None:
    for _ in range(20):  # warm
        post()
    before = {name: cpu_s(pid) for name, pid in pids.items()}
    started = time.perf_counter()
    for _ in range(calls):
        outcome = post()
    elapsed = time.perf_counter() - started
    cpu = {name: (cpu_s(pid) - before[name]) * 1000 / calls for name, pid in pids.items()}
    parts = "  ".join(f"{name} {ms:5.2f}" for name, ms in cpu.items())
    print(f"  {label:8} {elapsed * 1000 / calls:6.2f} ms/call   CPU ms/call: {parts}   ({outcome})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    with redis_for_bench() as redis_url, tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        prefix = f"bench-{secrets.token_hex(4)}:"
        env = {
            **os.environ,
            "GEOSVC_REDIS_URL": redis_url,
            "GEOSVC_REDIS_KEY_PREFIX": prefix,
            "GEOSVC_DATABASE_URL": f"sqlite:///{Path(tmp) / 'bench.db'}",
            "GEOSVC_DATA_DIR": os.environ.get("GEOSVC_DATA_DIR", str(ROOT / ".geosvc")),
            "GEOSVC_SECRET_PEPPER": "bench-pepper-" + "x" * 20,
            "GEOSVC_BASE_URL": base,
            "GEOSVC_LOG_LEVEL": "WARNING",
            "GEOSVC_FREE_QUOTA": "1000000",
            "GEOSVC_FREE_RATE_PER_S": "1000000",
            "GEOSVC_FREE_BURST": "1000000",
            "C_FORCE_ROOT": "1",
        }
        python = sys.executable
        subprocess.run([python, "-m", "app.cli", "migrate"], env=env, check=True)
        subprocess.run([python, "-m", "app.cli", "data", "build"], env=env, check=True)
        api = subprocess.Popen(
            [python, "-m", "uvicorn", "--factory", "app.main:create_app", "--port", str(port),
             "--log-level", "warning"], env=env,
        )  # fmt: skip
        worker = subprocess.Popen(
            [python, "-m", "app.cli", "worker", "--pool", "solo", "--loglevel", "warning"],
            env=env,
        )
        store = redis.Redis.from_url(redis_url)
        try:
            wait_until_up(base + "/")
            http = httpx.Client(base_url=base, timeout=30)
            email = f"bench-{secrets.token_hex(4)}@example.com"
            signed_up = http.post("/auth/signup", json={"email": email, "password": "bench-pw-1"})
            key = http.post("/api-keys", json={"name": "bench"}).json()["plaintext"]
            headers = {
                "Authorization": f"Bearer {key}",
                "Accept": "application/json, text/event-stream",
            }
            client = httpx.Client(timeout=60)

            def post() -> str:
                result = client.post(base + "/mcp", json=CALL, headers=headers).json()["result"]
                return str(result["structuredContent"].get("error", {}).get("code", "ok"))

            deadline = time.monotonic() + 60
            while post() != "ok":  # the worker is up
                assert time.monotonic() < deadline, "the worker never answered"
                time.sleep(0.2)
            pids = {"api": api.pid, "worker": worker.pid, "redis": int(store.info()["process_id"])}
            print(f"CPU per call, {args.calls} sequential calls each")
            measure("ok", args.calls, post, pids)
            user_id = signed_up.json()["userId"]
            counter = f"{prefix}usage:{{{user_id}}}:{period_of(utcnow())}"
            store.hset(counter, "used", 1_000_000)  # at the quota: refused at admission
            measure("refused", args.calls, post, pids)
        finally:
            api.terminate()
            worker.terminate()
            store.close()


if __name__ == "__main__":
    main()
