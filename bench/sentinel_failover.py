"""Failover drill on one Redis under Sentinel: `kill -9` the primary under load; the
Sentinels promote its replica and the app follows (`GEOSVC_REDIS_SENTINELS`).

A private primary (AOF everysec), one replica and three Sentinels (quorum 2, down after
2 s; tests/support/redis_sentinel.py), the production shape of `bench/drill_stack.py` on
them with Celery's broker on a throwaway RabbitMQ vhost, and --clients MCP clients over
--accounts accounts. After --warm seconds the primary is killed; load goes on --after
seconds. Then the same counts and reconciliation as `bench/cluster_failover.py`.

    .venv/bin/python bench/sentinel_failover.py [--accounts 4] [--clients 8]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster_failover import (  # noqa: E402
    Account,
    Drill,
    drill_arguments,
    reconcile,
    report,
    settle,
    start_load,
    stop_load,
)
from drill_stack import (  # noqa: E402
    ROOT,
    UNLIMITED_TENANTS,
    Stack,
    build_geodata,
    production_shape,
    rabbitmq_vhost,
)
from fault_drills import account  # noqa: E402

from tests.support.redis_sentinel import MASTER_NAME, LocalSentinel, local_sentinel  # noqa: E402

PROMOTION_DEADLINE_S = 30.0


async def run(stack: Stack, setup: LocalSentinel, args: argparse.Namespace) -> Drill:
    accounts = []
    for _ in range(args.accounts):
        user_id, key, http = await asyncio.to_thread(account, stack)
        http.close()
        accounts.append(Account(user_id, key))
    drill = Drill(accounts, title="one Redis primary + 1 replica under 3 Sentinels")
    drill.on_victim = list(accounts)  # every account lives on the primary
    start_load(stack, accounts, args.clients)
    started = time.monotonic()
    await asyncio.sleep(args.warm)
    drill.victim = setup.primary.port
    await asyncio.to_thread(setup.primary.kill9)
    killed = time.monotonic()
    print(f"killed the primary {setup.primary.port}; replica {setup.replica.port}", flush=True)
    with contextlib.suppress(Exception):
        await asyncio.to_thread(setup.wait_promoted, PROMOTION_DEADLINE_S)
        drill.promoted_s = time.monotonic() - killed
    await asyncio.sleep(args.after)
    await stop_load(accounts)
    drill.elapsed_s = time.monotonic() - started
    # Calls in flight at the kill may still answer: the outage is measured from the
    # first refusal on to the next success.
    after = [t for t in drill.calls().ok_times if t > killed + 0.5]
    drill.next_ok_s = min(after) - killed if after else None
    drill.victims_next_ok_s = drill.next_ok_s
    await asyncio.to_thread(settle, stack, drill, args.settle)
    await asyncio.to_thread(reconcile, stack, drill)
    return drill


@contextlib.contextmanager
def sentinel_stack(geodata: Path) -> Iterator[tuple[Stack, LocalSentinel]]:
    with contextlib.ExitStack() as resources:
        setup = resources.enter_context(local_sentinel())
        extra = {
            **UNLIMITED_TENANTS,
            # The URL gives the database (and a password); its host is not used.
            "GEOSVC_REDIS_URL": f"redis://127.0.0.1:{setup.primary.port}/0",
            "GEOSVC_REDIS_SENTINELS": setup.addresses,
            "GEOSVC_REDIS_SENTINEL_MASTER": MASTER_NAME,
            "GEOSVC_BROKER_URL": resources.enter_context(rabbitmq_vhost()),
        }
        stack = resources.enter_context(
            production_shape(aof=None, geodata_dir=geodata, extra_env=extra)
        )
        yield stack, setup


def main() -> None:
    args = drill_arguments(__doc__).parse_args()
    args.victim = "the primary"
    geodata = ROOT / ".geosvc"
    build_geodata(geodata)
    with sentinel_stack(geodata) as (stack, setup):
        print(f"stack up in {stack.workdir}, Sentinels {setup.addresses}", flush=True)
        drill = asyncio.run(run(stack, setup, args))
    report(drill, args)


if __name__ == "__main__":
    main()
