"""The short version of `bench/redis_kills.py`: with Redis as the Celery broker (the drill
stack's default), `kill -9` its Redis several times under 8 MCP clients. No worker exits,
each worker is back on its first reconnect attempt (no 2 s retry sleep of Celery's), and
tool calls answer again within 5 s of Redis being back."""

from __future__ import annotations

import asyncio

import pytest
from drill_stack import Stack
from fault_drills import Load, account
from redis_kills import kill_redis

pytestmark = pytest.mark.drill

KILLS = 5
CLIENTS = 8
# Celery's consumer logs this when an attempt to reach the broker failed and it sleeps
RETRY_SLEEP = "Trying again in"


def test_workers_survive_redis_kills_and_calls_answer_within_5_s(drill_stack: Stack) -> None:
    assert "GEOSVC_BROKER_URL" not in drill_stack.env  # Redis is the broker
    _, key, http = account(drill_stack)
    http.close()
    exits_before = [worker.restarts for worker in drill_stack.workers]
    logged_before = [len(worker.log()) for worker in drill_stack.workers]

    async def run() -> list[float | None]:
        load = Load(drill_stack, key)
        load.start(clients=CLIENTS)
        try:
            return await kill_redis(load, KILLS, gap_s=2.0)
        finally:
            await load.stop()

    recoveries = asyncio.run(run())

    logs = [w.log()[start:] for w, start in zip(drill_stack.workers, logged_before, strict=True)]
    assert [worker.restarts for worker in drill_stack.workers] == exits_before
    assert not any("Unrecoverable error" in log for log in logs)
    assert sum(log.count(RETRY_SLEEP) for log in logs) == 0
    assert None not in recoveries, recoveries
    assert max(r for r in recoveries if r is not None) < 5.0, recoveries
