"""Two costs of the e-mail features, each measured side by side in one run.

1. Password reset timing: POST /auth/password-reset for an address with an account and
   for one without, interleaved, against one uvicorn api (development settings, so the
   links go nowhere). The answer is sent before the address is looked up, so the two
   should not differ beyond noise: printed as p50/p90 and their ratios.
2. The usage alerts' share of a commit: the commit script before this change (copied
   below) and the current one, interleaved on the same Redis, for an account below the
   warning threshold (every call of a month but a few) and one above it.

    .venv/bin/python bench/account_mail.py [--requests 300] [--commits 20000]
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
from metering import bench_prefix, percentile, redis_for_bench  # noqa: E402

from app.kit.embedded_redis import free_port  # noqa: E402
from app.metering.scripts import COMMIT  # noqa: E402

# The commit script as it was before usage alerts (app/metering/scripts.py at 1ad0501).
COMMIT_BEFORE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local live = redis.call('ZREM', KEYS[2], ARGV[1])
local used = redis.call('HINCRBY', KEYS[1], 'used', tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return {live, used}
"""


def interleaved(
    runs: int, first: Callable[[], object], second: Callable[[], object]
) -> tuple[list[float], list[float]]:
    a: list[float] = []
    b: list[float] = []
    for i in range(runs):
        for run, samples in ((first, a), (second, b)) if i % 2 else ((second, b), (first, a)):
            started = time.perf_counter()
            run()
            samples.append((time.perf_counter() - started) * 1000)
    return a, b


def report(label: str, base: list[float], other: list[float], names: tuple[str, str]) -> None:
    p50 = percentile(base, 0.5), percentile(other, 0.5)
    p90 = percentile(base, 0.9), percentile(other, 0.9)
    print(
        f"  {label:28} {names[0]} p50 {p50[0]:.3f} ms p90 {p90[0]:.3f} ms | "
        f"{names[1]} p50 {p50[1]:.3f} ms p90 {p90[1]:.3f} ms | "
        f"ratio p50 {p50[1] / p50[0]:.2f} p90 {p90[1] / p90[0]:.2f}"
    )


def reset_timing(redis_url: str, requests: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")},
            "GEOSVC_REDIS_URL": redis_url,
            "GEOSVC_REDIS_KEY_PREFIX": bench_prefix(),
            "GEOSVC_DATABASE_URL": f"sqlite:///{Path(tmp) / 'bench.db'}",
            "GEOSVC_DATA_DIR": tmp,
            "GEOSVC_SECRET_PEPPER": "bench-pepper-" + "x" * 20,
            "GEOSVC_BASE_URL": base,
            "GEOSVC_LOG_LEVEL": "WARNING",
            "GEOSVC_AUTH_RATE_LIMIT_PER_IP": "1000000",
            "GEOSVC_PASSWORD_RESET_PER_ADDRESS_PER_HOUR": "1000000",
        }
        python = sys.executable
        subprocess.run([python, "-m", "app.cli", "migrate"], env=env, check=True)
        api = subprocess.Popen(
            [python, "-m", "uvicorn", "--factory", "app.main:create_app", "--port", str(port),
             "--log-level", "warning"], env=env,
        )  # fmt: skip
        try:
            wait_until_up(base + "/healthz")
            with httpx.Client(base_url=base, timeout=30) as http:
                known = f"bench-{secrets.token_hex(4)}@example.com"
                signed_up = http.post(
                    "/auth/signup", json={"email": known, "password": "bench passphrase 1"}
                )
                assert signed_up.status_code == 201, signed_up.text

                def ask(email: str) -> Callable[[], object]:
                    def post() -> object:
                        response = http.post("/auth/password-reset", json={"email": email})
                        assert response.status_code == 202, response.text
                        return response

                    return post

                unknown = f"nobody-{secrets.token_hex(4)}@example.com"
                interleaved(30, ask(known), ask(unknown))  # warm
                with_account, without = interleaved(requests, ask(known), ask(unknown))
            print(f"POST /auth/password-reset, {requests} each, interleaved")
            report("reset", with_account, without, ("account", "no account"))
        finally:
            api.terminate()
            api.wait()


def commit_cost(redis_url: str, commits: int) -> None:
    store = redis.Redis.from_url(redis_url)
    before, after = store.register_script(COMMIT_BEFORE), store.register_script(COMMIT)
    prefix = bench_prefix()
    print(f"commit script, {commits} each, interleaved (one round trip each)")
    try:
        for label, used in (("below the warning threshold", 0), ("above it (claims done)", 10**9)):
            keys_a = [f"{prefix}a:{label}", f"{prefix}a:{label}:res"]
            keys_b = [f"{prefix}b:{label}", f"{prefix}b:{label}:res"]
            store.hset(keys_a[0], "used", used)
            store.hset(keys_b[0], "used", used)
            # thresholds far above (below) or below (above) what is used
            warning, quota = (10**12, 10**12 + 1) if used == 0 else (80, 100)
            old_args, new_args = ["res_x", 1, 3600], ["res_x", 1, 3600, warning, quota]
            old, new = interleaved(
                commits,
                lambda keys=keys_a, args=old_args: before(keys=keys, args=args),
                lambda keys=keys_b, args=new_args: after(keys=keys, args=args),
            )
            report(label, old, new, ("before", "with alerts"))
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--commits", type=int, default=20_000)
    args = parser.parse_args()
    with redis_for_bench() as redis_url:
        reset_timing(redis_url, args.requests)
        commit_cost(redis_url, args.commits)


if __name__ == "__main__":
    main()
