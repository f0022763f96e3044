"""The shared services at saturation: Redis admission + commit, and the outbox drain into
PostgreSQL (the capacity model in docs/DEPLOYMENT.md, "Kubernetes").

A private redis-server (AOF fsynced every second, as production requires) and a private
PostgreSQL (bench/drill_stack.py; fsync on, as production runs it), nothing shared:

1. Redis: `--clients` processes, each an asyncio loop of `--concurrency` tasks, make
   reserve + send_commit pairs (the api's two Redis round trips of every paid call:
   the admission script, then the commit script with the outbox RPUSH) for `--accounts`
   standard accounts, for `--seconds`. Reported: pairs per second, and the CPU the
   redis-server process used per pair (utime+stime from /proc), so the pairs one Redis
   core sustains, whatever the clients could drive on this machine.
2. PostgreSQL: the outbox those calls filled is drained into the ledger by the billing
   task's own code (`app.metering.outbox.drain`: 500 events a transaction, insert
   on-conflict-do-nothing), alone. Reported: events per second, and the CPU of the
   PostgreSQL server processes and of the drainer per event.
3. Whole calls (`--calls-seconds`, 0 to skip): the production shape of
   bench/drill_stack.py (`geosvc api`, two prefork workers, beat; a private Redis with AOF
   and PostgreSQL; Celery on a throwaway vhost of the machine's RabbitMQ), MCP clients of
   bench/fault_drills.py on a standard account, and the CPU each component used per
   successful call (utime+stime of its processes from /proc). RabbitMQ's figure is the
   whole machine's broker, shared with whatever else uses it: an upper bound.

    .venv/bin/python bench/capacity.py [--seconds 20] [--clients 2] [--concurrency 32]
        [--calls-seconds 30] [--geodata DIR]

`--cluster` runs the three phases on a local Redis Cluster instead (`--masters`, the outbox
in `--buckets` lists drained at once; bench/capacity_cluster.py; phase 1 on one Redis
first, the baseline): phase 3's stack then keeps its counters on the cluster, Celery on
RabbitMQ, and reports each master's CPU per call. Every run ends with the CPU per unit of
work by component as a table (the one in bench/RESULTS.md the capacity model reads).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))
import capacity_cluster  # noqa: E402
from capacity_probes import (  # noqa: E402
    CpuTable,
    DurablePostgres,
    cpu_s,
    postgres_cpu_s,
    settings_env,
    tree_cpu_s,
)
from drill_stack import (  # noqa: E402
    UNLIMITED_TENANTS,
    RedisServer,
    Stack,
    build_geodata,
    production_shape,
    rabbitmq_vhost,
)

TABLE = CpuTable()
IDLE_S = 8.0  # the stack measured idle before the load

# --- one client process -----------------------------------------------------------------


async def client_loop(seconds: float, concurrency: int, accounts: list[str]) -> int:
    from app.metering.service import reserve, send_commit
    from app.plans import Plan

    deadline = time.monotonic() + seconds
    done = 0

    async def one(task: int) -> None:
        nonlocal done
        n = task
        while time.monotonic() < deadline:
            user_id = accounts[n % len(accounts)]
            n += concurrency
            reservation = await reserve(user_id, Plan.STANDARD)
            call_id = f"call_{secrets.token_hex(8)}"
            committed = await send_commit(reservation, call_id=call_id, key_id=None, tool="geocode")
            await committed()
            done += 1

    await asyncio.gather(*(one(task) for task in range(concurrency)))
    return done


def client_main(seconds: float, concurrency: int, accounts: int) -> None:
    from app.kit.ids import new_user_id

    users = [new_user_id() for _ in range(accounts)]
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.time()
    done = asyncio.run(client_loop(seconds, concurrency, users))
    after, ended = resource.getrusage(resource.RUSAGE_SELF), time.time()
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(json.dumps({"calls": done, "cpu_s": cpu, "started": started, "ended": ended}))


# --- the run ----------------------------------------------------------------------------


def redis_phase(args: argparse.Namespace, redis: RedisServer, env: dict[str, str]) -> int:
    argv = [sys.executable, __file__, "--client", "--seconds", str(args.seconds)]
    argv += ["--concurrency", str(args.concurrency), "--accounts", str(args.accounts)]
    assert redis.process is not None
    started_cpu = cpu_s(redis.process.pid)
    clients = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(args.clients)
    ]
    results = [json.loads(client.communicate()[0]) for client in clients]
    # the clients' common window (their start-up, before it, leaves Redis idle)
    wall = max(r["ended"] for r in results) - min(r["started"] for r in results)
    redis_cpu = cpu_s(redis.process.pid) - started_cpu
    calls = sum(r["calls"] for r in results)
    client_cpu = sum(r["cpu_s"] for r in results)
    per_call_ms = redis_cpu / calls * 1000
    print(f"Redis: {calls:,} reserve+commit pairs in {wall:.1f} s = {calls / wall:,.0f}/s")
    print(
        f"  redis-server CPU {redis_cpu:.2f} s ({redis_cpu / wall:.2f} cores) = "
        f"{per_call_ms:.3f} ms per pair -> one Redis core: {1000 / per_call_ms:,.0f} pairs/s"
    )
    print(f"  clients' CPU {client_cpu / calls * 1000:.3f} ms per pair (the api's share)")
    TABLE.add("Redis (one)", "reserve+commit pair", redis_cpu, calls)
    return calls


def drain_main(data_dir: Path, events: int) -> None:
    """In a process of its own, whose settings are the bench's from the start."""
    from sqlmodel import func, select

    from app.kit.db import migrate, new_session
    from app.kit.redis_client import sync_redis
    from app.metering.keys import outbox_key
    from app.metering.outbox import drain
    from app.models import UsageEvent

    migrate()
    store = sync_redis()
    waiting = store.llen(outbox_key())
    before = resource.getrusage(resource.RUSAGE_SELF)
    pg_before, started = postgres_cpu_s(data_dir), time.monotonic()
    drained = drain(new_session, store)
    wall = time.monotonic() - started
    pg_cpu = postgres_cpu_s(data_dir) - pg_before
    after = resource.getrusage(resource.RUSAGE_SELF)
    own = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    with new_session() as session:
        count = session.exec(select(func.count()).select_from(UsageEvent)).one()
    print(
        f"Outbox drain: {drained:,} of {waiting:,} events ({events:,} committed; ledger "
        f"{count:,}) in {wall:.1f} s = {drained / wall:,.0f} events/s"
    )
    print(
        f"  PostgreSQL CPU {pg_cpu / drained * 1000:.3f} ms per event -> one core: "
        f"{drained / pg_cpu:,.0f} events/s; the drainer's CPU {own / drained * 1000:.3f} ms "
        f"per event -> one worker core: {drained / own:,.0f} events/s"
    )


def component_cpu_s(
    stack: Stack, rabbitmq: int | None, masters: list[int] | None
) -> dict[str, float]:
    """`masters`: the pids of a cluster's masters (the stack's own Redis is then idle)."""
    services = stack.supervisor.services
    assert stack.redis.process is not None
    cpu = {
        "api": tree_cpu_s(services["api"].pid),
        "workers": sum(tree_cpu_s(worker.pid) for worker in stack.workers),
        "beat": tree_cpu_s(services["beat"].pid),
        "PostgreSQL": postgres_cpu_s(stack.postgres.data),
    }
    if masters is None:
        cpu["Redis"] = cpu_s(stack.redis.process.pid)
    for number, pid in enumerate(masters or [], start=1):
        cpu[f"Redis master {number}"] = cpu_s(pid)
    if rabbitmq is not None:
        cpu["RabbitMQ (shared)"] = cpu_s(rabbitmq)
    return cpu


async def measure_calls(
    stack: Stack, seconds: float, masters: list[int] | None
) -> tuple[int, float, dict[str, float]]:
    from fault_drills import Load, account

    _user_id, api_key, http = account(stack)
    http.close()
    rabbitmq = next(
        (int(pid) for pid in subprocess.run(
            ["pidof", "beam.smp"], capture_output=True, text=True
        ).stdout.split()),
        None,
    )  # fmt: skip
    # Idle first: what each component burns with no call (polls, heartbeats, beat) is
    # taken off, or on this loaded machine's few calls/s it would pass for cost per call.
    idle_before, idle_started = component_cpu_s(stack, rabbitmq, masters), time.monotonic()
    await asyncio.sleep(IDLE_S)
    idle_after, idle_wall = component_cpu_s(stack, rabbitmq, masters), time.monotonic()
    idle = {k: (idle_after[k] - idle_before[k]) / (idle_wall - idle_started) for k in idle_after}
    print("  idle cores: " + ", ".join(f"{k} {v:.3f}" for k, v in idle.items()))
    load = Load(stack, api_key)
    load.start()
    await asyncio.sleep(5)  # connected and warm
    before = component_cpu_s(stack, rabbitmq, masters)
    ok_before, started = load.calls.ok, time.monotonic()
    await asyncio.sleep(seconds)
    after, ok_after, wall = (
        component_cpu_s(stack, rabbitmq, masters),
        load.calls.ok,
        time.monotonic() - started,
    )
    calls = await load.stop()
    if calls.failed or calls.hung:
        print(f"  failed: {dict(calls.failed)}, hung: {calls.hung}")
    used = {name: max(0.0, after[name] - before[name] - idle[name] * wall) for name in before}
    return ok_after - ok_before, wall, used


def calls_phase(args: argparse.Namespace, cluster: dict[str, str] | None = None) -> None:
    """`cluster`: the settings of a Redis Cluster (and `masters`, their pids, comma-separated)
    the stack keeps its counters on."""
    geodata = args.geodata
    build_geodata(geodata)
    masters = [int(pid) for pid in cluster.pop("masters").split(",")] if cluster else None
    with contextlib.ExitStack() as resources:
        env = {**UNLIMITED_TENANTS, "GEOSVC_BROKER_URL": resources.enter_context(rabbitmq_vhost())}
        env.update(cluster or {})
        stack = resources.enter_context(
            production_shape(aof="everysec", geodata_dir=geodata, extra_env=env)
        )
        calls, wall, cpu = asyncio.run(measure_calls(stack, args.calls_seconds, masters))
    where = f" on a Redis Cluster of {len(masters)}" if masters else " on one Redis"
    print(
        f"Whole calls{where}: {calls:,} successful MCP tool calls in {wall:.1f} s = "
        f"{calls / wall:,.0f}/s (CPU net of idle)"
    )
    for name, used in cpu.items():
        TABLE.add(f"{name}{where}", "whole call (1 task message, 1 ledger row)", used, calls)
        per_call = used / calls * 1000
        per_core = f"{1000 / per_call:,.0f}" if per_call > 0 else "-"  # none above idle
        print(
            f"  {name:<18} {per_call:6.3f} ms of CPU per call ({used / wall:.2f} cores) -> "
            f"one core: {per_core} calls/s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--concurrency", type=int, default=32, help="calls in flight each")
    parser.add_argument("--accounts", type=int, default=1000)
    parser.add_argument("--calls-seconds", type=float, default=30.0)
    parser.add_argument("--geodata", type=Path, default=ROOT / ".geosvc", help="data dir")
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--drain", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--events", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--cluster", action="store_true", help="on a local Redis Cluster")
    parser.add_argument("--masters", type=int, default=3, help="the cluster's masters")
    parser.add_argument("--buckets", type=int, default=3, help="outbox lists (--cluster)")
    parser.add_argument("--drain-bucket", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client_main(args.seconds, args.concurrency, args.accounts)
        return
    if args.drain:
        drain_main(args.drain, args.events)
        return
    if args.drain_bucket is not None or args.cluster:
        capacity_cluster.main(args, __file__, redis_phase, TABLE)
        if args.cluster and args.calls_seconds:
            calls_phase(args)  # one Redis first, side by side
            capacity_cluster.whole_calls(args, calls_phase)
        if args.cluster:
            TABLE.print(f"CPU per unit of work, on a Redis Cluster of {args.masters} masters:")
        return

    with tempfile.TemporaryDirectory(prefix="geosvc-capacity-") as workdir:
        os.chmod(workdir, 0o755)  # the postgres user must reach its own dir under it
        redis = RedisServer(Path(workdir), aof="everysec")
        postgres = DurablePostgres(Path(workdir))
        redis.start()
        postgres.start()
        try:
            postgres.create_database()
            env = settings_env(redis.url, postgres.url, f"cap-{secrets.token_hex(3)}:")
            print(
                f"capacity bench: {args.clients} client processes x {args.concurrency} in "
                f"flight, {args.accounts} accounts, {args.seconds:g} s; {os.cpu_count()} cores"
            )
            calls = redis_phase(args, redis, env)
            drain = [sys.executable, __file__, "--drain", str(postgres.data), "--events"]
            subprocess.run([*drain, str(calls)], env=env, check=True)
        finally:
            redis.stop()
            postgres.stop()
    if args.calls_seconds:
        calls_phase(args)
    TABLE.print("CPU per unit of work, on one Redis:")


if __name__ == "__main__":
    main()
