"""The short version of `bench/cluster_failover.py`: a Redis Cluster of 3 masters with a
replica each (its own redis-servers on free ports), the production shape on it with
RabbitMQ as broker, MCP clients of 3 accounts, and `kill -9` of a master mid-load. The
cluster promotes the replica by itself; no call gets a 500 or hangs, none is charged
twice, and after reconciliation every account's counter equals its ledger."""

from __future__ import annotations

import argparse
import asyncio
import shutil
from pathlib import Path

import pytest
from cluster_failover import cluster_stack, report, run

from tests.support.services import REQUIRE_SERVICES

pytestmark = pytest.mark.drill


def _missing() -> str | None:
    for binary in ("redis-server", "redis-cli", "rabbitmqctl", "pg_config"):
        if shutil.which(binary) is None:
            return f"{binary} is not installed"
    return None


def test_a_cluster_master_killed_under_calls_fails_over_and_reconciles(
    geodata_dir: Path,
) -> None:
    missing = _missing()
    if missing is not None:
        if REQUIRE_SERVICES:
            raise RuntimeError(missing)
        pytest.skip(missing)
    args = argparse.Namespace(
        accounts=3, clients=4, warm=3.0, after=5.0, settle=30.0, victim="other"
    )
    with cluster_stack(geodata_dir) as (stack, cluster):
        drill = asyncio.run(run(stack, cluster, args))
    report(drill, args)  # shown with -s or on failure

    calls = drill.calls()
    assert drill.promoted_s is not None, "the replica was not promoted"
    assert drill.on_victim, "no account on the killed master: the drill proved nothing"
    assert drill.victims_next_ok_s is not None, "the killed master's accounts never recovered"
    assert calls.ok > 0
    assert calls.statuses[500] == 0, calls.statuses
    assert drill.lost() == 0, calls
    assert "INTERNAL" not in calls.failed, calls.failed
    assert drill.charged_twice() == 0
    # What the cluster loses is at most the master's unreplicated last writes; whatever
    # reached the ledger is the truth the counters are brought back to.
    assert drill.reconciled(), [(a.user_id, a.ledger, a.reconciled) for a in drill.accounts]
