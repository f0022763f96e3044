"""`bench/capacity.py --cluster`: the shared services at saturation on a Redis Cluster.

A private cluster of `--masters` redis-servers (AOF fsynced every second, as production
requires; tests/support/redis_cluster.py) and the private PostgreSQL of capacity.py:

1. Redis: the same reserve + send_commit pairs as capacity.py's phase 1, over
   `--accounts` accounts (so over every shard), with `GEOSVC_REDIS_CLUSTER=true` and the
   outbox in `--buckets` lists. Reported: pairs per second, the CPU of all the nodes per
   pair and each node's share (how even the hash tags spread the accounts), and the
   clients' CPU per pair (the api's share, with redis-py's cluster client).
2. The drains: one drain process per outbox bucket, all at once (what the billing workers
   do with one task per bucket). Reported: events per second together, the drainers' CPU
   per event and PostgreSQL's.
3. Whole calls (`whole_calls`, unless `--calls-seconds 0`): capacity.py's phase 3 with the
   stack's counters, reservations and outbox on a fresh cluster (Celery on RabbitMQ, the
   result channel on the cluster): each master's CPU per call beside the api's, the
   workers', PostgreSQL's and RabbitMQ's.
Each figure goes into the table of CPU per unit of work capacity.py prints at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capacity_probes import CpuTable, DurablePostgres, cpu_s, postgres_cpu_s, settings_env
from drill_stack import RedisServer

from tests.support.redis_cluster import LocalCluster, local_cluster


def main(
    args: argparse.Namespace,
    script: str,
    single_redis_phase: Callable[[argparse.Namespace, RedisServer, dict[str, str]], int],
    table: CpuTable,
) -> None:
    if args.drain_bucket is not None:
        drain_one(args.drain_bucket)
        return
    with contextlib.ExitStack() as resources:
        workdir = resources.enter_context(tempfile.TemporaryDirectory(prefix="geosvc-cap-"))
        os.chmod(workdir, 0o755)  # the postgres user must reach its own dir under it
        cluster = resources.enter_context(local_cluster(args.masters, appendfsync="everysec"))
        single = RedisServer(Path(workdir), aof="everysec")
        single.start()
        resources.callback(single.stop)
        postgres = DurablePostgres(Path(workdir))
        postgres.start()
        resources.callback(postgres.stop)
        postgres.create_database()
        single_env = settings_env(single.url, postgres.url, f"cap-{secrets.token_hex(3)}:")
        env = cluster_env(single_env, cluster, args.buckets)
        print(
            f"capacity bench on a Redis Cluster of {args.masters}: {args.clients} client "
            f"processes x {args.concurrency} in flight, {args.accounts} accounts, "
            f"{args.seconds:g} s; {os.cpu_count()} cores. First one Redis, the baseline:"
        )
        single_redis_phase(args, single, single_env)
        calls = redis_phase(args, cluster, env, script, table)
        broadcast_phase(cluster, table)
        os.environ.update(env)  # this process migrates the database
        drains_phase(args, postgres.data, env, script, calls, table)


def whole_calls(
    args: argparse.Namespace, calls_phase: Callable[[argparse.Namespace, dict[str, str]], None]
) -> None:
    """capacity.py's phase 3 on a fresh cluster of `--masters` (AOF fsynced every second)."""
    with local_cluster(args.masters, appendfsync="everysec") as cluster:
        settings = cluster_env({}, cluster, args.buckets)
        del settings["GEOSVC_BROKER_URL"]  # RabbitMQ's, as production has it
        settings["masters"] = ",".join(str(node.process.pid) for node in cluster.nodes)
        calls_phase(args, settings)


def cluster_env(env: dict[str, str], cluster: LocalCluster, buckets: int) -> dict[str, str]:
    return {
        **env,
        "GEOSVC_REDIS_URL": cluster.url,
        "GEOSVC_REDIS_CLUSTER": "true",
        "GEOSVC_BROKER_URL": "memory://",  # the bench sends no task
        "GEOSVC_OUTBOX_BUCKETS": str(buckets),
        # CPU per call is measured, not latency: on a loaded machine the cluster client's
        # first COMMAND (its whole table) can take longer than the production 1.5 s
        "GEOSVC_REDIS_COMMAND_TIMEOUT_S": "10",
    }


def redis_phase(
    args: argparse.Namespace,
    cluster: LocalCluster,
    env: dict[str, str],
    script: str,
    table: CpuTable,
) -> int:
    argv = [sys.executable, script, "--client", "--seconds", str(args.seconds)]
    argv += ["--concurrency", str(args.concurrency), "--accounts", str(args.accounts)]
    pids = [node.process.pid for node in cluster.nodes]
    started_cpu = [cpu_s(pid) for pid in pids]
    clients = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(args.clients)
    ]
    results = [json.loads(client.communicate()[0]) for client in clients]
    wall = max(r["ended"] for r in results) - min(r["started"] for r in results)
    node_cpu = [cpu_s(pid) - before for pid, before in zip(pids, started_cpu, strict=True)]
    calls = sum(r["calls"] for r in results)
    client_cpu = sum(r["cpu_s"] for r in results)
    per_call_ms = sum(node_cpu) / calls * 1000
    shares = ", ".join(f"{used / sum(node_cpu):.0%}" for used in node_cpu)
    print(f"Redis Cluster ({len(pids)} masters): {calls:,} reserve+commit pairs in {wall:.1f} s")
    print(f"  = {calls / wall:,.0f} pairs/s")
    print(
        f"  all nodes' CPU {sum(node_cpu):.2f} s = {per_call_ms:.3f} ms per pair -> "
        f"{1000 / per_call_ms:,.0f} pairs/s per Redis core; nodes' shares {shares}"
    )
    print(f"  clients' CPU {client_cpu / calls * 1000:.3f} ms per pair (the api's share)")
    for number, used in enumerate(node_cpu, start=1):
        table.add(f"Redis master {number} (of {len(pids)})", "reserve+commit pair", used, calls)
    table.add("Redis, all masters", "reserve+commit pair", sum(node_cpu), calls)
    table.add("cluster client (api's share)", "reserve+commit pair", client_cpu, calls)
    return calls


def broadcast_phase(cluster: LocalCluster, table: CpuTable, messages: int = 20_000) -> None:
    """What one result's classic PUBLISH costs each master: published on one node (the
    result's shard), delivered to a pattern subscriber on another (an api process's), and
    relayed over the cluster bus to every node. The part of a call's Redis CPU that does
    not shrink as masters are added."""
    publisher, listener = cluster.nodes[0], cluster.nodes[1]
    subscriber = listener.client().pubsub()
    subscriber.psubscribe("bench-celery-task-meta-*")
    payload = "x" * 400  # about a tool result's JSON
    pids = [node.process.pid for node in cluster.nodes]
    before = [cpu_s(pid) for pid in pids]
    with publisher.client() as client:
        for start in range(0, messages, 500):
            pipe = client.pipeline(transaction=False)
            for n in range(start, start + 500):
                pipe.publish(f"bench-celery-task-meta-{n}", payload)
            pipe.execute()
            while subscriber.get_message(timeout=0.01) is not None:
                pass
    used = [cpu_s(pid) - b for pid, b in zip(pids, before, strict=True)]
    subscriber.close()
    roles = ["publishing node", "subscriber's node", *(["another node"] * (len(pids) - 2))]
    print(f"Result PUBLISH on a cluster: {messages:,} messages of {len(payload)} bytes")
    for role, cpu in zip(roles, used, strict=True):
        print(f"  {role}: {cpu / messages * 1000:.4f} ms per message")
        table.add(f"Redis, {role} (PUBLISH)", "result published", cpu, messages)


def drain_one(bucket: int) -> None:
    """In a process of its own: drain one bucket; its figures as JSON."""
    from app.kit.db import new_session
    from app.kit.redis_client import sync_redis
    from app.metering.outbox import drain

    store = sync_redis()
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.time()
    drained = drain(new_session, store, bucket)
    after, ended = resource.getrusage(resource.RUSAGE_SELF), time.time()
    own = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(json.dumps({"drained": drained, "cpu_s": own, "started": started, "ended": ended}))
    sys.stdout.flush()
    sys.stdin.readline()  # stay connected until PostgreSQL's CPU is read (its backend's)


def drains_phase(
    args: argparse.Namespace,
    data_dir: Path,
    env: dict[str, str],
    script: str,
    calls: int,
    table: CpuTable,
) -> None:
    from app.kit.db import migrate
    from app.runtime import reload_settings

    reload_settings()  # the bench's settings (os.environ), not those read at import
    migrate()  # before the drainers, which would race to create the tables
    pg_before = postgres_cpu_s(data_dir)
    drainers = [
        subprocess.Popen(
            [sys.executable, script, "--drain-bucket", str(bucket)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for bucket in range(args.buckets)
    ]
    results: list[dict[str, Any]] = [json.loads(d.stdout.readline()) for d in drainers]  # type: ignore[union-attr]
    pg_cpu = postgres_cpu_s(data_dir) - pg_before
    for drainer in drainers:
        drainer.communicate("\n")
    drained = sum(r["drained"] for r in results)
    wall = max(r["ended"] for r in results) - min(r["started"] for r in results)
    own = sum(r["cpu_s"] for r in results)
    print(
        f"Outbox drains: {args.buckets} buckets at once, {drained:,} events ({calls:,} "
        f"committed) in {wall:.1f} s = {drained / wall:,.0f} events/s"
    )
    print(
        f"  PostgreSQL CPU {pg_cpu / drained * 1000:.3f} ms per event; the drainers' CPU "
        f"{own / drained * 1000:.3f} ms per event -> one worker core: {drained / own:,.0f} "
        "events/s"
    )
    table.add(f"outbox drains ({args.buckets} at once)", "event", own, drained)
    table.add("PostgreSQL (drains)", "ledger row", pg_cpu, drained)
