"""Credit metering latency: reserve + commit (the two round trips of a call) beside a
bare INCR.

One run, one asyncio client, sequential calls, the two measurements interleaved in the
same loop so both see the same server and noise. Uses GEOSVC_REDIS_URL, else the local
Redis at 127.0.0.1:6379, else an embedded one. Keys go under a throwaway prefix and are
deleted afterwards (never FLUSHDB: the Redis may be shared).

    .venv/bin/python bench/metering.py [--iterations 5000]
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
from collections.abc import Iterator
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


_prefixes: list[str] = []


def bench_prefix(name: str = "bench") -> str:
    """A throwaway Redis key prefix, whose keys redis_for_bench deletes at its end."""
    prefix = f"{name}-{secrets.token_hex(4)}:"
    _prefixes.append(prefix)
    return prefix


@contextlib.contextmanager
def redis_for_bench() -> Iterator[str]:
    """The machine's Redis (or an embedded one). At the end, the keys under every
    bench_prefix are deleted: left there (a run of mcp_e2e leaves 7,000 task results),
    they slow down every later SCAN on the shared Redis, the test suite's included."""
    from app.kit.embedded_redis import reachable_or_embedded_redis

    url = os.environ.get("GEOSVC_REDIS_URL", "redis://127.0.0.1:6379/0")
    with reachable_or_embedded_redis(url) as redis_url:
        try:
            yield redis_url
        finally:
            store = redis.Redis.from_url(redis_url)
            while _prefixes:
                keys = list(store.scan_iter(match=f"{_prefixes.pop()}*", count=1000))
                for start in range(0, len(keys), 500):
                    store.delete(*keys[start : start + 500])
            store.close()


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(iterations: int, warmup: int) -> tuple[list[float], list[float]]:
    from app.kit.ids import new_user_id
    from app.kit.redis_client import async_redis
    from app.metering.service import reserve, send_commit
    from app.plans import Plan

    client = async_redis()
    user_id = new_user_id()
    incr_key = f"{os.environ['GEOSVC_REDIS_KEY_PREFIX']}incr:{{{user_id}}}"
    metered: list[float] = []
    bare: list[float] = []
    for i in range(warmup + iterations):
        start = time.perf_counter()
        reservation = await reserve(user_id, Plan.FREE)
        used = await send_commit(reservation, call_id=f"call_{i}", key_id=None, tool="geocode")
        await used()
        middle = time.perf_counter()
        await client.incr(incr_key)
        end = time.perf_counter()
        if i >= warmup:
            metered.append((middle - start) * 1000)
            bare.append((end - middle) * 1000)
    await client.aclose()
    return metered, bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=500)
    args = parser.parse_args()

    with redis_for_bench() as url, tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            GEOSVC_REDIS_URL=url,
            GEOSVC_REDIS_KEY_PREFIX=bench_prefix(),
            # a reservation's first call seeds its counter from the ledger
            GEOSVC_DATABASE_URL=f"sqlite:///{Path(tmp) / 'bench.db'}",
            # the free plan's checks run on every reserve; make their limits unreachable
            GEOSVC_FREE_QUOTA=str(10**9),
            GEOSVC_FREE_RATE_PER_S=str(10**9),
            GEOSVC_FREE_BURST=str(10**9),
            GEOSVC_FREE_CONCURRENCY=str(10**9),
        )
        migrate = [sys.executable, "-m", "app.cli", "migrate"]
        subprocess.run(migrate, check=True, capture_output=True)
        store = redis.Redis.from_url(url, decode_responses=True)
        info: dict[str, object] = store.info("server")  # type: ignore[assignment]
        version = info["redis_version"]
        metered, bare = asyncio.run(measure(args.iterations, args.warmup))
        store.close()

    rows = [
        ("reserve+commit (free plan, 2 round trips)", metered),
        ("bare INCR (1 call)", bare),
    ]
    print(
        f"metering bench: Redis {version} at {url}; {args.iterations} iterations after "
        f"{args.warmup} warm-up; sequential, one asyncio client; latency in ms"
    )
    for label, samples in rows:
        p50, p99 = percentile(samples, 0.50), percentile(samples, 0.99)
        mean = statistics.fmean(samples)
        print(f"  {label:<42} p50 {p50:7.3f}   p99 {p99:7.3f}   mean {mean:7.3f}")
    ratio50 = percentile(metered, 0.50) / percentile(bare, 0.50)
    ratio99 = percentile(metered, 0.99) / percentile(bare, 0.99)
    print(f"  {'ratio reserve+commit / INCR':<42} p50 {ratio50:7.2f}x  p99 {ratio99:7.2f}x")


if __name__ == "__main__":
    main()
