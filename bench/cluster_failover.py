"""Failover drill on a Redis Cluster: `kill -9` a master under load; its replica takes over.

A private cluster of 3 masters, each with 1 replica, AOF fsynced every second
(tests/support/redis_cluster.py), the production shape of `bench/drill_stack.py` on it
(`GEOSVC_REDIS_CLUSTER=true`, the outbox in 3 buckets, Celery's broker on a throwaway
RabbitMQ vhost, a private PostgreSQL), and --clients MCP clients over --accounts
accounts. After --warm seconds a master is killed (`--victim other`: one the api was not
seeded with and that serves the most accounts; `seed`: the node GEOSVC_REDIS_URL names);
the cluster promotes its replica by itself (node timeout 2 s). Load goes on --after
seconds. Then the outbox is drained, and per account the drill compares the client's
successes, the ledger rows and the Redis counter, runs reconciliation
(`geosvc admin rebuild-counters`, twice: the second run takes off what the first run's
snapshot shows the ledger never got) and reads the counters again. Prints:

- failover: kill -> replica promoted, kill -> next successful call;
- calls answered, refused retryable (by code), lost (hung, transport errors, 5xx);
- charged twice (ledger rows above client successes; the ledger's call id is unique);
- credits lost from counters (counter below the ledger) and served but never billed
  (client successes above the ledger: events lost with the master's last writes);
- the counters after reconciliation vs the ledger.

    .venv/bin/python bench/cluster_failover.py [--accounts 4] [--clients 8] [--victim other]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import redis
from redis.sentinel import Sentinel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drill_stack import (  # noqa: E402
    ROOT,
    UNLIMITED_TENANTS,
    Stack,
    build_geodata,
    production_shape,
    rabbitmq_vhost,
)
from fault_drills import Calls, Load, account, ledger_rows  # noqa: E402

from tests.support.redis_cluster import (  # noqa: E402
    ClusterNode,
    LocalCluster,
    local_cluster,
    store_for,
)

BUCKETS = 3
RETRYABLE = ("UNAVAILABLE", "DEADLINE_EXCEEDED", "RATE_LIMITED")
PROMOTION_DEADLINE_S = 30.0


@dataclass
class Account:
    user_id: str
    key: str
    load: Load | None = None
    ledger: int = 0
    counter: int = 0
    reconciled: int = 0


@dataclass
class Drill:
    accounts: list[Account]
    title: str = ""
    victim: int = 0
    on_victim: list[Account] = field(default_factory=list)
    promoted_s: float | None = None
    next_ok_s: float | None = None
    victims_next_ok_s: float | None = None
    elapsed_s: float = 0.0
    repairs: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def calls(self) -> Calls:
        loads = [acct.load for acct in self.accounts]
        return Calls.merged([load.calls for load in loads if load is not None])

    def retryable(self) -> int:
        return sum(n for code, n in self.calls().failed.items() if code in RETRYABLE)

    def lost(self) -> int:
        """Calls with no answer in our envelope: hung, broken transport, HTTP 5xx (503s
        are our envelope on the control plane; a tool call's refusal is an MCP result)."""
        calls = self.calls()
        broken = sum(
            n for code, n in calls.failed.items() if code.split(":")[0] in ("exc", "connect")
        )
        return calls.hung + broken + sum(n for status, n in calls.statuses.items() if status >= 500)

    def other_refused(self) -> Counter[str]:
        return Counter(
            {
                code: n
                for code, n in self.calls().failed.items()
                if code not in RETRYABLE and code.split(":")[0] not in ("exc", "connect")
            }
        )

    def charged_twice(self) -> int:
        return sum(max(0, a.ledger - a.load.calls.ok) for a in self.accounts if a.load)

    def never_billed(self) -> int:
        return sum(max(0, a.load.calls.ok - a.ledger) for a in self.accounts if a.load)

    def counter_lost(self) -> int:
        return sum(max(0, a.ledger - a.counter) for a in self.accounts)

    def counter_over(self) -> int:
        return sum(max(0, a.counter - a.ledger) for a in self.accounts)

    def reconciled(self) -> bool:
        return all(a.reconciled == a.ledger for a in self.accounts)


def store(stack: Stack) -> redis.Redis:
    """A client of the Redis the stack uses: the cluster, or the primary Sentinel names."""
    env = stack.env
    if env.get("GEOSVC_REDIS_SENTINELS"):
        addresses = [item.rsplit(":", 1) for item in env["GEOSVC_REDIS_SENTINELS"].split(",")]
        sentinel = Sentinel([(host, int(port)) for host, port in addresses])
        return sentinel.master_for(env["GEOSVC_REDIS_SENTINEL_MASTER"], decode_responses=True)
    return store_for(env["GEOSVC_REDIS_URL"], cluster=True)


def counter_of(stack: Stack, user_id: str) -> int:
    from app.kit.clock import period_of, utcnow

    key = f"{stack.env['GEOSVC_REDIS_KEY_PREFIX']}usage:{{{user_id}}}:{period_of(utcnow())}"
    with store(stack) as client:
        return int(client.hget(key, "used") or 0)


def outbox_depth(stack: Stack) -> int:
    prefix = stack.env["GEOSVC_REDIS_KEY_PREFIX"]
    buckets = int(stack.env.get("GEOSVC_OUTBOX_BUCKETS", "1"))
    with store(stack) as client:
        return sum(int(client.llen(f"{prefix}usage:outbox:{{o{b}}}")) for b in range(buckets))


def holder(cluster: LocalCluster, stack: Stack, acct: Account) -> int:
    """The port of the master serving the account's slot (its hash tag's)."""
    prefix = stack.env["GEOSVC_REDIS_KEY_PREFIX"]
    return cluster.node_of_key(f"{prefix}usage:{{{acct.user_id}}}:x").port


def pick_victim(
    cluster: LocalCluster, stack: Stack, accounts: list[Account], seed: bool
) -> ClusterNode:
    """The seed node, or the other master whose slots hold the most accounts' counters."""
    seed_node = cluster.nodes[0]
    if seed:
        return seed_node
    holders = Counter(holder(cluster, stack, acct) for acct in accounts)
    others = [node for node in cluster.masters() if node is not seed_node]
    return max(others, key=lambda node: holders[node.port])


def settle(stack: Stack, drill: Drill, deadline_s: float) -> None:
    """Until the outbox is empty and the ledger stops growing (bounded)."""
    deadline, last = time.monotonic() + deadline_s, -1
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            for acct in drill.accounts:
                acct.ledger = ledger_rows(stack, acct.user_id)
            total = sum(a.ledger for a in drill.accounts)
            if outbox_depth(stack) == 0 and total == last:
                break
            last = total
        time.sleep(1.0)
    for acct in drill.accounts:
        acct.counter = counter_of(stack, acct.user_id)


def reconcile(stack: Stack, drill: Drill) -> None:
    for _run in range(2):
        subprocess.run(
            stack.geosvc("admin", "rebuild-counters"),
            env=stack.env,
            check=True,
            capture_output=True,
        )
    for acct in drill.accounts:
        acct.reconciled = counter_of(stack, acct.user_id)
    repairs = f"{stack.env['GEOSVC_REDIS_KEY_PREFIX']}metering:reconcile:repairs"
    with store(stack) as client:
        drill.repairs = {k: int(v) for k, v in client.hgetall(repairs).items()}


def start_load(stack: Stack, accounts: list[Account], clients: int) -> None:
    """`clients` MCP clients shared out over the accounts (at least one each)."""
    for number, acct in enumerate(accounts):
        acct.load = Load(stack, acct.key)
        share = clients // len(accounts) + (number < clients % len(accounts))
        acct.load.start(clients=max(1, share))


async def stop_load(accounts: list[Account]) -> None:
    for acct in accounts:
        assert acct.load is not None
        await acct.load.stop()


async def run(stack: Stack, cluster: LocalCluster, args: argparse.Namespace) -> Drill:
    accounts: list[Account] = []
    seed = cluster.nodes[0].port
    # The victim must serve some account: a few more accounts until one is off the seed.
    while len(accounts) < args.accounts or (
        args.victim == "other"
        and len(accounts) < args.accounts + 8
        and all(holder(cluster, stack, a) == seed for a in accounts)
    ):
        user_id, key, http = await asyncio.to_thread(account, stack)
        http.close()
        accounts.append(Account(user_id, key))
    drill = Drill(accounts, title="cluster 3 masters x 1 replica")
    start_load(stack, accounts, args.clients)
    started = time.monotonic()
    await asyncio.sleep(args.warm)
    victim = await asyncio.to_thread(pick_victim, cluster, stack, accounts, args.victim == "seed")
    replica = await asyncio.to_thread(cluster.replica_of, victim)
    drill.victim = victim.port
    drill.on_victim = [a for a in accounts if holder(cluster, stack, a) == victim.port]
    await asyncio.to_thread(victim.kill9)
    killed = time.monotonic()
    print(f"killed master {victim.port}; its replica {replica.port} should take over", flush=True)
    with contextlib.suppress(Exception):
        await asyncio.to_thread(cluster.wait_promoted, replica, PROMOTION_DEADLINE_S)
        drill.promoted_s = time.monotonic() - killed
    if victim is cluster.nodes[0]:
        # A client seeded with a dead node cannot start (redis-py needs one reachable
        # node): what an operator does, repoint the URL; running processes go on.
        stack.env["GEOSVC_REDIS_URL"] = replica.url
        drill.notes.append(f"GEOSVC_REDIS_URL repointed at {replica.port} for new processes")
    await asyncio.sleep(args.after)
    await stop_load(accounts)
    drill.elapsed_s = time.monotonic() - started
    after = [t for t in drill.calls().ok_times if t > killed]
    drill.next_ok_s = min(after) - killed if after else None
    theirs = [t for a in drill.on_victim if a.load for t in a.load.calls.ok_times if t > killed]
    drill.victims_next_ok_s = min(theirs) - killed if theirs else None
    await asyncio.to_thread(settle, stack, drill, args.settle)
    await asyncio.to_thread(reconcile, stack, drill)
    return drill


def report(drill: Drill, args: argparse.Namespace) -> None:
    calls = drill.calls()

    def seconds(value: float | None) -> str:
        return "never" if value is None else f"{value:.1f} s"

    print()
    print(
        f"{drill.title}, master {drill.victim} killed ({args.victim}), "
        f"{len(drill.accounts)} accounts, {args.clients} clients, {drill.elapsed_s:.0f} s"
    )
    print(
        f"failover: replica promoted {seconds(drill.promoted_s)} after the kill; next OK call "
        f"{seconds(drill.next_ok_s)}, of the {len(drill.on_victim)} accounts on the killed "
        f"master {seconds(drill.victims_next_ok_s)}"
    )
    retryable = ", ".join(f"{c}={n}" for c, n in calls.failed.items() if c in RETRYABLE) or "-"
    other = ", ".join(f"{c}={n}" for c, n in drill.other_refused().items()) or "-"
    print(
        f"calls: {calls.total()}, answered {calls.ok}, refused retryable {drill.retryable()} "
        f"({retryable}), other refusals ({other}), lost {drill.lost()} (hung {calls.hung}, "
        f"HTTP 5xx {sum(n for s, n in calls.statuses.items() if s >= 500)}, "
        f"500 {calls.statuses[500]})"
    )
    print(
        f"ledger {sum(a.ledger for a in drill.accounts)}; charged twice {drill.charged_twice()}; "
        f"served but never billed {drill.never_billed()}; counters below the ledger by "
        f"{drill.counter_lost()}, above by {drill.counter_over()}"
    )
    print(f"after reconciliation: counters == ledger for every account: {drill.reconciled()} "
          f"(repairs {drill.repairs or '-'})")  # fmt: skip
    for note in drill.notes:
        print(f"note: {note}")
    for acct in drill.accounts:
        ok = acct.load.calls.ok if acct.load else 0
        print(f"  {acct.user_id}: client OK {ok}, ledger {acct.ledger}, counter {acct.counter} "
              f"-> {acct.reconciled}")  # fmt: skip


@contextlib.contextmanager
def cluster_stack(geodata: Path) -> Iterator[tuple[Stack, LocalCluster]]:
    """The cluster (with replicas) and the production shape on it, RabbitMQ as broker."""
    with contextlib.ExitStack() as resources:
        cluster = resources.enter_context(
            local_cluster(replicas=1, appendfsync="everysec", node_timeout_ms=2_000)
        )
        extra = {
            **UNLIMITED_TENANTS,
            "GEOSVC_REDIS_CLUSTER": "true",
            "GEOSVC_REDIS_URL": cluster.url,
            "GEOSVC_OUTBOX_BUCKETS": str(BUCKETS),
            "GEOSVC_BROKER_URL": resources.enter_context(rabbitmq_vhost()),
        }
        stack = resources.enter_context(
            production_shape(aof=None, geodata_dir=geodata, extra_env=extra)
        )
        yield stack, cluster


def drill_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The load and its phases, as every failover drill takes them."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--accounts", type=int, default=4)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--warm", type=float, default=8.0, help="load before the kill, s")
    parser.add_argument("--after", type=float, default=12.0, help="load after promotion, s")
    parser.add_argument("--settle", type=float, default=60.0, help="max wait for the ledger")
    return parser


def main() -> None:
    parser = drill_arguments(__doc__)
    parser.add_argument("--victim", default="other", choices=["other", "seed"])
    args = parser.parse_args()
    geodata = ROOT / ".geosvc"
    build_geodata(geodata)
    with cluster_stack(geodata) as (stack, cluster):
        print(f"stack up in {stack.workdir} on cluster {cluster.url}", flush=True)
        drill = asyncio.run(run(stack, cluster, args))
    report(drill, args)


if __name__ == "__main__":
    main()
