"""What the request log costs a call, and what a full log costs Redis.

The metering calls a tool call makes after its reservation, with and without the request
log's entry in the same pipeline, interleaved call by call in one asyncio client so both
see the same server and noise:

  commit           send_commit (credit + usage outbox), as before the request log
  commit + log     the same round trip with the entry (a successful call)
  release          release alone (a failed call), as before
  release + log    the release in a pipeline with the entry (a failed call)
  refusal log      the entry alone, as a refused call writes it after its answer

Latency (p50, p99 of the round trip) and this process's CPU per call (the api's side:
encoding the entry and the commands). Then a full log of --max-calls entries: its Redis
memory (MEMORY USAGE) and the time to read and filter it (what GET /usage/calls does).
Uses GEOSVC_REDIS_URL, else the local Redis, else an embedded one; keys go under a
throwaway prefix and are deleted afterwards.

    .venv/bin/python bench/request_log.py [--iterations 3000] [--max-calls 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from metering import bench_prefix, percentile, redis_for_bench  # noqa: E402  (bench/metering.py)

Step = Callable[[], Awaitable[None]]


async def measure(iterations: int, warmup: int) -> dict[str, tuple[list[float], list[float]]]:
    from app.kit.ids import new_user_id
    from app.metering.service import release, reserve, send_commit
    from app.plans import Plan
    from app.request_log import service as request_log

    user_id = new_user_id()

    def entry(outcome: str) -> request_log.CallEntry:
        return request_log.entry_for(
            principal_id="k" * 16,
            tool="geocode",
            failure=None if outcome == "OK" else _error(outcome),
            started=time.monotonic() - 0.012,
            credits=1 if outcome == "OK" else 0,
            call_id=f"call_{secrets.token_hex(6)}_{secrets.token_hex(8)}",
        )

    async def commit(log: bool) -> Step:
        reservation = await reserve(user_id, Plan.STANDARD)
        also = request_log.writes_for(user_id, entry("OK")) if log else None

        async def step() -> None:
            call_id = secrets.token_hex(8)
            committed = await send_commit(
                reservation, call_id=call_id, key_id="k", tool="geocode", also=also
            )
            await committed()

        return step

    async def fail(log: bool) -> Step:
        reservation = await reserve(user_id, Plan.STANDARD)
        also = request_log.writes_for(user_id, entry("NOT_FOUND")) if log else None

        async def step() -> None:
            await release(reservation, also=also)

        return step

    async def refusal() -> Step:
        async def step() -> None:
            await request_log.record(user_id, entry("RATE_LIMITED"))

        return step

    makers: dict[str, Callable[[], Awaitable[Step]]] = {
        "commit": lambda: commit(False),
        "commit + log": lambda: commit(True),
        "release": lambda: fail(False),
        "release + log": lambda: fail(True),
        "refusal log": refusal,
    }
    samples: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in makers}
    for i in range(warmup + iterations):
        for name, make in makers.items():
            step = await make()  # the reservation (and the entry) are made outside the timing
            cpu, wall = time.process_time(), time.perf_counter()
            await step()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if i >= warmup:
                samples[name][0].append(wall * 1000)
                samples[name][1].append(cpu * 1_000_000)
    return samples


def _error(code: str) -> Exception:
    from app.kit.errors import NotFound, RateLimited

    return NotFound() if code == "NOT_FOUND" else RateLimited()


async def full_log(store: redis.Redis, max_calls: int) -> tuple[int, float]:
    """Memory of a full log, and the median time to read and filter it (ms)."""
    from app.kit.ids import new_user_id
    from app.request_log import service as request_log

    user_id = new_user_id()
    now = int(time.time() * 1000)
    for n in range(max_calls):
        outcome = "OK" if n % 10 else "RATE_LIMITED"
        entry = request_log.CallEntry(
            now - n * 50, "api_key", f"{n % 3:016d}", "geocode", outcome, 18.37,
            1 if outcome == "OK" else 0, f"call_{secrets.token_hex(6)}_{secrets.token_hex(8)}",
        )  # fmt: skip
        await request_log.record(user_id, entry)
    memory = int(store.memory_usage(request_log.log_key(user_id)) or 0)
    memory += int(store.memory_usage(request_log.last_used_key(user_id)) or 0)
    reads = []
    for _ in range(30):
        started = time.perf_counter()
        request_log.recent_calls(user_id, outcome="ERROR", limit=100)
        reads.append((time.perf_counter() - started) * 1000)
    return memory, statistics.median(reads)


async def both(
    store: redis.Redis, args: argparse.Namespace
) -> tuple[dict[str, tuple[list[float], list[float]]], tuple[int, float]]:
    return await measure(args.iterations, args.warmup), await full_log(store, args.max_calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--max-calls", type=int, default=1000)
    args = parser.parse_args()

    with redis_for_bench() as url:
        os.environ.update(
            GEOSVC_REDIS_URL=url,
            GEOSVC_REDIS_KEY_PREFIX=bench_prefix(),
            GEOSVC_STANDARD_RATE_PER_S=str(10**9),
            GEOSVC_STANDARD_BURST=str(10**9),
            GEOSVC_STANDARD_CONCURRENCY=str(10**9),
            GEOSVC_REQUEST_LOG_MAX_CALLS=str(args.max_calls),
        )
        store = redis.Redis.from_url(url, decode_responses=True)
        samples, (memory, read_ms) = asyncio.run(both(store, args))
        store.close()

    print(
        f"request log bench: Redis at {url}; {args.iterations} iterations of each after "
        f"{args.warmup} warm-up, interleaved; one asyncio client"
    )
    print(f"  {'':<15} {'p50 ms':>8} {'p99 ms':>8} {'CPU us/call':>12}")
    for name, (wall, cpu) in samples.items():
        p50, p99 = percentile(wall, 0.5), percentile(wall, 0.99)
        print(f"  {name:<15} {p50:8.3f} {p99:8.3f} {statistics.median(cpu):12.1f}")
    for base, logged in (("commit", "commit + log"), ("release", "release + log")):
        ratio = percentile(samples[logged][0], 0.5) / percentile(samples[base][0], 0.5)
        extra_cpu = statistics.median(samples[logged][1]) - statistics.median(samples[base][1])
        print(f"  {logged} / {base}: p50 {ratio:.2f}x, +{extra_cpu:.0f} us CPU")
    print(
        f"  a full log of {args.max_calls} calls: {memory / 1024:.1f} KiB in Redis "
        f"({memory / args.max_calls:.0f} B per call); read + filter {read_ms:.2f} ms"
    )


if __name__ == "__main__":
    main()
