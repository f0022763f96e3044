"""Workers across Redis crashes: `kill -9` the stack's own redis-server N times under load.

The production shape of `bench/drill_stack.py` (its own redis-server with AOF everysec and
PostgreSQL, `geosvc api`, two `geosvc worker` prefork x2, `geosvc beat`), with Redis as the
Celery broker (the default) or with a throwaway vhost on the machine's RabbitMQ. --clients
MCP clients call tools while Redis is killed and started again on the same port with its
AOF, --kills times, --gap seconds of load after each recovery. Prints:

- worker exits: worker processes the supervisor had to start again (compose's
  `restart: unless-stopped`), and how many of them logged `Unrecoverable error` or were
  stopped by the liveness watchdog (status 70);
- per kill, the time from Redis being back to the next successful call (max, median);
- calls OK and failed (by error code), hung calls;
- credits charged (the Redis counter) vs ledger rows vs client successes.

    .venv/bin/python bench/redis_kills.py [--broker redis|rabbitmq] [--kills 20] [--clients 8]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drill_stack import (  # noqa: E402
    ROOT,
    UNLIMITED_TENANTS,
    Stack,
    build_geodata,
    production_shape,
    rabbitmq_vhost,
)
from fault_drills import Load, account, redis_counter, settle  # noqa: E402

RECOVERY_DEADLINE_S = 60.0


async def kill_redis(load: Load, kills: int, gap_s: float) -> list[float | None]:
    """Kill and restart Redis `kills` times; per kill, seconds from Redis back to the next
    successful call (None: none within RECOVERY_DEADLINE_S)."""
    stack = load.stack
    recoveries: list[float | None] = []
    await asyncio.sleep(gap_s)
    for number in range(1, kills + 1):
        await asyncio.to_thread(stack.redis.kill9)
        await asyncio.to_thread(stack.redis.start)
        back = time.monotonic()
        deadline = back + RECOVERY_DEADLINE_S
        while time.monotonic() < deadline and not any(t > back for t in load.calls.ok_times):
            await asyncio.sleep(0.05)
        after = [t for t in load.calls.ok_times if t > back]
        recoveries.append(min(after) - back if after else None)
        shown = "never" if recoveries[-1] is None else f"{recoveries[-1]:.2f} s"
        print(f"kill {number}: next OK call {shown} after Redis was back", flush=True)
        await asyncio.sleep(gap_s)
    return recoveries


def worker_exits(stack: Stack) -> tuple[int, int, int]:
    """(worker restarts, `Unrecoverable error` lines, watchdog exits) over all workers."""
    restarts = sum(worker.restarts for worker in stack.workers)
    logs = [worker.log() for worker in stack.workers]
    unrecoverable = sum(log.count("Unrecoverable error") for log in logs)
    watchdog = sum(log.count("the consumer loop has not run") for log in logs)
    return restarts, unrecoverable, watchdog


async def run(stack: Stack, args: argparse.Namespace) -> None:
    user_id, key, http = await asyncio.to_thread(account, stack)
    http.close()
    load = Load(stack, key)
    load.start(clients=args.clients)
    started = time.monotonic()
    recoveries = await kill_redis(load, args.kills, args.gap)
    calls = await load.stop()
    elapsed = time.monotonic() - started
    ledger = await settle(stack, user_id, calls.ok, args.settle)
    counter = await asyncio.to_thread(redis_counter, stack, user_id)
    restarts, unrecoverable, watchdog = worker_exits(stack)

    known = [r for r in recoveries if r is not None]
    print()
    print(f"broker {args.broker}, {args.kills} kills of Redis, {args.clients} clients, "
          f"{elapsed:.0f} s")  # fmt: skip
    print(f"worker exits: {restarts} (Unrecoverable error logged {unrecoverable}x, "
          f"watchdog exits {watchdog}); api/beat restarts: "
          f"{stack.supervisor.restarts() - restarts}")  # fmt: skip
    if known:
        print(
            f"time to the next OK call after Redis is back: max {max(known):.2f} s, "
            f"median {statistics.median(known):.2f} s, over 5 s: "
            f"{sum(r > 5 for r in known)}, never: {len(recoveries) - len(known)}"
        )
    else:
        print("time to the next OK call after Redis is back: never")
    failed = ", ".join(f"{k}={v}" for k, v in calls.failed.most_common()) or "-"
    print(f"calls: {calls.total()}, OK {calls.ok}, failed {sum(calls.failed.values())} "
          f"({failed}), hung {calls.hung}")  # fmt: skip
    fivexx = sum(v for k, v in calls.statuses.items() if k >= 500)
    print(f"HTTP 5xx answers: {fivexx}")
    print(f"charged (Redis counter) {counter}, ledger rows {ledger}, client successes {calls.ok}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--broker", default="redis", choices=["redis", "rabbitmq"])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--gap", type=float, default=3.0, help="load between kills, s")
    parser.add_argument("--settle", type=float, default=60.0, help="max wait for the ledger")
    args = parser.parse_args()
    geodata = ROOT / ".geosvc"
    build_geodata(geodata)
    extra = dict(UNLIMITED_TENANTS)
    with contextlib.ExitStack() as resources:
        if args.broker == "rabbitmq":
            extra["GEOSVC_BROKER_URL"] = resources.enter_context(rabbitmq_vhost())
        stack = resources.enter_context(
            production_shape(aof="everysec", geodata_dir=geodata, extra_env=extra)
        )
        print(f"stack up in {stack.workdir} (broker {args.broker})", flush=True)
        asyncio.run(run(stack, args))


if __name__ == "__main__":
    main()
