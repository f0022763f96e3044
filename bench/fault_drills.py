"""Fault drills against the production shape (`bench/drill_stack.py`), with bounded load.

12 clients call tools over /mcp with the official `mcp` client while a fault is injected:

  pool-child-kill    SIGKILL a worker's pool child, three times
  worker-main-kill   SIGKILL a worker's main process (its pool is orphaned)
  redis-restart      kill -9 redis-server and start it again (--cycles times)
  drain-kill         SIGKILL the process that is draining the usage outbox, mid-drain
  postgres-stop      stop PostgreSQL for --pg-outage seconds (control-plane probes too)
  free-cap-flush     FLUSHALL Redis while a free account sits at its monthly cap

Per drill it prints: calls OK, failed by code, hung (no answer within deadline + 15 s);
client successes vs ledger rows vs the Redis counter; events lost; HTTP 5xx answers
(500s separately); the worst time from a fault to the next successful call; how many
processes the supervisor restarted (compose's `restart: unless-stopped`; 0 by hand).

    .venv/bin/python bench/fault_drills.py [--short] [--cycles 10] [--aof everysec|always|no]
        [--drills redis-restart,postgres-stop,...]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import random
import secrets
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drill_stack import (  # noqa: E402
    ROOT,
    UNLIMITED_TENANTS,
    Stack,
    build_geodata,
    production_shape,
    rabbitmq_vhost,
    wait_for,
)

CLIENTS = 12
TOOLS = [
    ("get_population", {"postal_code": "94103"}),
    ("geocode", {"query": "Austin, TX", "limit": 1}),
    ("reverse_geocode", {"lat": 30.27, "lon": -97.74}),
]


@dataclass
class Calls:
    """What the clients saw during one drill."""

    ok: int = 0
    failed: collections.Counter[str] = field(default_factory=collections.Counter)
    hung: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    ok_times: list[float] = field(default_factory=list)

    def total(self) -> int:
        return self.ok + sum(self.failed.values()) + self.hung

    @classmethod
    def merged(cls, many: list[Calls]) -> Calls:
        """What several loads saw, together."""
        total = cls()
        for calls in many:
            total.ok += calls.ok
            total.hung += calls.hung
            total.failed.update(calls.failed)
            total.statuses.update(calls.statuses)
            total.ok_times.extend(calls.ok_times)
        return total


class Load:
    """CLIENTS concurrent MCP clients on one API key, until `stop()`."""

    def __init__(self, stack: Stack, api_key: str, deadline_s: float = 35.0) -> None:
        self.stack = stack
        self.api_key = api_key
        self.deadline_s = deadline_s
        self.calls = Calls()
        self._running = True
        self._tasks: list[asyncio.Task[None]] = []

    def start(self, clients: int = CLIENTS) -> None:
        self._tasks = [asyncio.create_task(self._client(n)) for n in range(clients)]

    async def stop(self) -> Calls:
        self._running = False
        await asyncio.gather(*self._tasks)
        return self.calls

    async def _client(self, number: int) -> None:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async def on_response(response: Any) -> None:
            self.calls.statuses[response.status_code] += 1

        rng = random.Random(number)
        while self._running:
            http = httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {self.api_key}"},
                timeout=self.deadline_s,
                event_hooks={"response": [on_response]},
            )
            try:
                async with (
                    http,
                    Client(
                        streamable_http_client(self.stack.mcp_url, http_client=http), mode="legacy"
                    ) as client,
                ):
                    while self._running:
                        name, args = rng.choice(TOOLS)
                        if not await self._one_call(client, name, args):
                            break  # the session broke: reconnect
            except Exception as exc:
                self.calls.failed[f"connect:{type(exc).__name__}"] += 1
            await asyncio.sleep(0.2)

    async def _one_call(self, client: Any, name: str, args: dict[str, Any]) -> bool:
        """One call, counted; False when the session should be rebuilt."""
        try:
            result = await asyncio.wait_for(client.call_tool(name, args), self.deadline_s)
        except TimeoutError:
            self.calls.hung += 1
            return False
        except Exception as exc:
            self.calls.failed[f"exc:{type(exc).__name__}"] += 1
            return False
        if result.is_error:
            error = (result.structured_content or {}).get("error", {})
            self.calls.failed[str(error.get("code", "?"))] += 1
        else:
            self.calls.ok += 1
            self.calls.ok_times.append(time.monotonic())
        return True


def account(stack: Stack, *, standard: bool = True) -> tuple[str, str, httpx.Client]:
    """(user id, API key, signed-in control-plane client) of a fresh account."""
    http = httpx.Client(base_url=stack.base_url, timeout=30)
    email = f"drill-{secrets.token_hex(4)}@example.com"
    me = http.post("/auth/signup", json={"email": email, "password": "drill-password"})
    me.raise_for_status()
    if standard:
        checkout = http.post("/subscription").json()["checkoutUrl"]
        http.post(checkout, headers={"Origin": stack.base_url})
    key = http.post("/api-keys", json={"name": "drill"}).json()["plaintext"]
    return str(me.json()["userId"]), str(key), http


@dataclass
class Result:
    name: str
    calls: Calls
    ledger: int
    counter: int | None
    recovery_s: float | None
    restarts: int
    elapsed_s: float
    notes: list[str] = field(default_factory=list)
    works_afterwards: bool = True

    @property
    def lost(self) -> int:
        return max(0, self.calls.ok - self.ledger)


def ledger_rows(stack: Stack, user_id: str) -> int:
    rows = stack.postgres.query("SELECT count(*) FROM usage_events WHERE user_id = %s", user_id)
    return int(rows[0][0])  # type: ignore[arg-type]


def redis_counter(stack: Stack, user_id: str) -> int | None:
    from app.kit.clock import period_of, utcnow

    key = f"{stack.env['GEOSVC_REDIS_KEY_PREFIX']}usage:{{{user_id}}}:{period_of(utcnow())}"
    with contextlib.suppress(Exception):
        value = stack.redis.client().hget(key, "used")
        return int(value) if value is not None else None
    return None


def outbox_depth(stack: Stack) -> int:
    return int(stack.redis.client().llen(f"{stack.env['GEOSVC_REDIS_KEY_PREFIX']}usage:outbox"))


async def settle(stack: Stack, user_id: str, expected: int, deadline_s: float) -> int:
    """Wait (bounded) until the outbox is empty and the ledger holds `expected` rows."""
    deadline = time.monotonic() + deadline_s
    rows = -1
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            rows = await asyncio.to_thread(ledger_rows, stack, user_id)
            if rows >= expected and await asyncio.to_thread(outbox_depth, stack) == 0:
                return rows
        await asyncio.sleep(0.5)
    return rows


def recovery_after(fault_times: list[float], calls: Calls) -> float | None:
    """Worst time from a fault to the next successful call (None: never recovered)."""
    worst = 0.0
    for when in fault_times:
        after = [t for t in calls.ok_times if t > when]
        if not after:
            return None
        worst = max(worst, min(after) - when)
    return worst


async def run_drill(
    stack: Stack,
    name: str,
    inject: Callable[[Load, list[float], list[str]], Awaitable[None]],
    *,
    settle_s: float,
    standard: bool = True,
) -> Result:
    user_id, key, http = await asyncio.to_thread(account, stack, standard=standard)
    http.close()
    restarts_before = stack.supervisor.restarts()
    load = Load(stack, key)
    load.start()
    started = time.monotonic()
    fault_times: list[float] = []
    notes: list[str] = []
    await inject(load, fault_times, notes)
    calls = await load.stop()
    elapsed = time.monotonic() - started
    ledger = await settle(stack, user_id, calls.ok, settle_s)
    return Result(
        name,
        calls,
        ledger,
        await asyncio.to_thread(redis_counter, stack, user_id),
        recovery_after(fault_times, calls),
        stack.supervisor.restarts() - restarts_before,
        elapsed,
        notes,
    )


def kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


# --- the drills --------------------------------------------------------------------------


def pool_child_kill(seconds: float) -> Callable[..., Awaitable[None]]:
    async def inject(load: Load, faults: list[float], notes: list[str]) -> None:
        for _ in range(3):
            await asyncio.sleep(seconds / 4)
            worker = random.choice(load.stack.workers)
            children = worker.children()
            if children:
                kill(random.choice(children))
                faults.append(time.monotonic())
        await asyncio.sleep(seconds / 4)

    return inject


def worker_main_kill(seconds: float) -> Callable[..., Awaitable[None]]:
    async def inject(load: Load, faults: list[float], notes: list[str]) -> None:
        await asyncio.sleep(seconds / 3)
        kill(load.stack.workers[0].pid)
        faults.append(time.monotonic())
        await asyncio.sleep(2 * seconds / 3)

    return inject


def redis_restart(cycles: int, settle_s: float) -> Callable[..., Awaitable[None]]:
    async def inject(load: Load, faults: list[float], notes: list[str]) -> None:
        await asyncio.sleep(3)
        for cycle in range(cycles):
            await asyncio.to_thread(load.stack.redis.kill9)
            await asyncio.to_thread(load.stack.redis.start)
            restarted = time.monotonic()
            faults.append(restarted)
            # up to 30 s for the first success, then a little more load before the next cycle
            deadline = restarted + 30
            while time.monotonic() < deadline and not any(
                t > restarted for t in load.calls.ok_times
            ):
                await asyncio.sleep(0.2)
            if not any(t > restarted for t in load.calls.ok_times):
                notes.append(f"cycle {cycle + 1}: no success within 30 s")
            await asyncio.sleep(settle_s)

    return inject


def drain_kill(seconds: float) -> Callable[..., Awaitable[None]]:
    """Hold the ledger table locked, so the next drain blocks inside its Redis lock; find
    the process whose PostgreSQL connection waits on that lock and SIGKILL it."""

    async def inject(load: Load, faults: list[float], notes: list[str]) -> None:
        import psycopg

        stack = load.stack
        await asyncio.sleep(seconds / 4)
        blocker = await psycopg.AsyncConnection.connect(stack.postgres.url)
        # pg_stat_activity is snapshotted per transaction: watch from a connection of its own
        watcher = await psycopg.AsyncConnection.connect(stack.postgres.url, autocommit=True)
        victim = None
        try:
            await blocker.execute("LOCK TABLE usage_events IN EXCLUSIVE MODE")
            deadline = time.monotonic() + 15
            while victim is None and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
                rows = await (
                    await watcher.execute(
                        "SELECT client_port FROM pg_stat_activity "
                        "WHERE wait_event_type = 'Lock' AND query ILIKE '%usage_events%'"
                    )
                ).fetchall()
                ours = stack_pids(stack)
                for (port,) in rows:
                    pid = pid_of_connection(int(port), stack.postgres.port)
                    if victim is None and pid in ours:
                        victim = pid
            if victim is None:
                notes.append("no drain caught mid-drain")
            else:
                kill(victim)
                faults.append(time.monotonic())
        finally:
            await blocker.rollback()
            await blocker.close()
            await watcher.close()
        if victim is not None:
            stalled = await outbox_stall(stack, deadline_s=3 * seconds)
            notes.append(f"outbox stalled {stalled:.1f} s after the drainer died")
        await asyncio.sleep(seconds / 4)

    return inject


async def outbox_stall(stack: Stack, deadline_s: float) -> float:
    """Seconds until the drain lock is gone and the outbox drained again."""
    started = time.monotonic()
    lock = f"{stack.env['GEOSVC_REDIS_KEY_PREFIX']}usage:outbox:lock"
    client = stack.redis.client()
    while time.monotonic() - started < deadline_s:
        if not client.exists(lock) and outbox_depth(stack) < 50:
            break
        await asyncio.sleep(0.2)
    return time.monotonic() - started


def pid_of_connection(local_port: int, remote_port: int) -> int | None:
    """The pid owning the TCP connection from `local_port` to `remote_port` (via /proc).

    Both ports: Linux gives the same ephemeral port to connections to different
    destinations, so a local port alone can name the drill's own connection to the api."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as handle:
            for line in handle.readlines()[1:]:
                parts = line.split()
                local = int(parts[1].rsplit(":", 1)[1], 16)
                remote = int(parts[2].rsplit(":", 1)[1], 16)
                if (local, remote) == (local_port, remote_port):
                    inodes.add(f"socket:[{parts[9]}]")
    if len(inodes) != 1:
        return None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in inodes:
                        return int(entry.name)
    return None


def stack_pids(stack: Stack) -> set[int]:
    """The supervised services and their children: the only processes a drill may kill."""
    pids = set()
    for service in stack.supervisor.services.values():
        if service.process is not None and service.process.poll() is None:
            pids.add(service.pid)
            pids.update(service.children())
    return pids


def postgres_stop(outage_s: float, calm_s: float) -> Callable[..., Awaitable[None]]:
    async def inject(load: Load, faults: list[float], notes: list[str]) -> None:
        stack = load.stack
        _, _, control = await asyncio.to_thread(account, stack, standard=False)
        await asyncio.sleep(calm_s)
        await asyncio.to_thread(stack.postgres.stop, "fast")
        faults.append(time.monotonic())
        statuses: collections.Counter[str] = collections.Counter()
        retry_after = 0
        ends = time.monotonic() + outage_s
        while time.monotonic() < ends:
            try:
                answer = await asyncio.to_thread(control.get, "/api-keys", timeout=5)
                statuses[str(answer.status_code)] += 1
                retry_after += "retry-after" in answer.headers
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
            await asyncio.sleep(0.5)
        await asyncio.to_thread(stack.postgres.start)
        control.close()
        notes.append(
            "control plane during the outage: "
            + ", ".join(f"{k}x{v}" for k, v in sorted(statuses.items()))
            + f" (Retry-After on {retry_after})"
        )
        await asyncio.sleep(calm_s)

    return inject


def free_cap_flush(quota: int, after_s: float) -> Callable[..., Awaitable[None]]:
    async def inject(load: Load, faults: list[float], notes: list[str]) -> None:
        deadline = time.monotonic() + 60
        while load.calls.failed["QUOTA_EXCEEDED"] == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        ok_at_cap = load.calls.ok
        await asyncio.to_thread(load.stack.redis.client().flushall)
        await asyncio.sleep(after_s)
        notes.append(
            f"quota {quota}: {ok_at_cap} OK at the cap, {load.calls.ok - ok_at_cap} OK after "
            f"the flush (over the cap: {max(0, load.calls.ok - quota)})"
        )

    return inject


def drills(args: argparse.Namespace) -> dict[str, tuple[Callable[..., Awaitable[None]], dict]]:
    seconds = 6.0 if args.short else 20.0
    return {
        "pool-child-kill": (pool_child_kill(seconds), {}),
        "worker-main-kill": (worker_main_kill(seconds + (4 if args.short else 10)), {}),
        "redis-restart": (redis_restart(args.cycles, 3.0 if args.short else 5.0), {}),
        "drain-kill": (drain_kill(seconds), {}),
        "postgres-stop": (postgres_stop(args.pg_outage, 2.0 if args.short else 5.0), {}),
        "free-cap-flush": (
            free_cap_flush(args.free_quota, 4.0 if args.short else 8.0),
            {"standard": False},
        ),
    }


def print_table(results: list[Result], restarts_by_hand: int = 0) -> None:
    header = (
        f"{'drill':<17}{'secs':>5}{'calls':>7}{'OK':>7}{'hung':>6}  {'ledger':>7}"
        f"{'counter':>8}{'lost':>6}"
        f"{'5xx':>5}{'500':>5}{'recov s':>8}{'auto-rst':>9}  failed by code"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        fivexx = sum(v for k, v in r.calls.statuses.items() if k >= 500)
        recovery = "never" if r.recovery_s is None else f"{r.recovery_s:.1f}"
        failed = ", ".join(f"{k}={v}" for k, v in r.calls.failed.most_common()) or "-"
        print(
            f"{r.name:<17}{r.elapsed_s:>5.0f}{r.calls.total():>7}{r.calls.ok:>7}"
            f"{r.calls.hung:>6}  {r.ledger:>7}"
            f"{r.counter if r.counter is not None else '-':>8}{r.lost:>6}{fivexx:>5}"
            f"{r.calls.statuses[500]:>5}{recovery:>8}{r.restarts:>9}  {failed}"
        )
        for note in r.notes + ([] if r.works_afterwards else ["tool calls still fail afterwards"]):
            print(f"{'':<17}  {note}")
    print(f"hand restarts: {restarts_by_hand}")


def short_options(**overrides: Any) -> argparse.Namespace:
    """The CI-sized drills (tests/drills)."""
    defaults = {"short": True, "cycles": 2, "pg_outage": 5.0, "free_quota": 30, "settle": 30.0}
    return argparse.Namespace(**{**defaults, **overrides})


async def run_one(stack: Stack, name: str, args: argparse.Namespace) -> Result:
    """One drill, then wait (bounded) until tool calls work again."""
    inject, options = drills(args)[name]
    result = await run_drill(stack, name, inject, settle_s=args.settle, **options)
    result.works_afterwards = await asyncio.to_thread(recover_between_drills, stack)
    return result


async def run_all(stack: Stack, args: argparse.Namespace) -> list[Result]:
    chosen = args.drills.split(",") if args.drills else list(drills(args))
    results = []
    for name in drills(args):
        if name in chosen:
            print(f"drill {name} ...", flush=True)
            results.append(await run_one(stack, name, args))
    return results


def recover_between_drills(stack: Stack) -> bool:
    """Drills are independent: wait until a tool call works again (bounded, 60 s)."""
    _, key, http = account(stack)
    http.close()

    async def one() -> bool:
        load = Load(stack, key, deadline_s=25)
        load.start(clients=1)
        deadline = time.monotonic() + 25
        while load.calls.ok == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        return (await load.stop()).ok > 0

    try:
        wait_for(lambda: asyncio.run(one()), "recovery between drills", 60, every=1)
    except RuntimeError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--short", action="store_true", help="the CI-sized version")
    parser.add_argument("--cycles", type=int, default=10, help="redis restart cycles")
    parser.add_argument("--aof", default="everysec", choices=["no", "everysec", "always"])
    parser.add_argument("--pg-outage", type=float, default=10.0)
    parser.add_argument("--free-quota", type=int, default=60)
    parser.add_argument("--settle", type=float, default=75.0, help="max wait for the ledger")
    parser.add_argument("--drills", default="", help="comma-separated subset")
    parser.add_argument("--env", default="development", choices=["development", "production"])
    parser.add_argument(
        "--broker", default="redis", choices=["redis", "rabbitmq"], help="Celery broker"
    )
    args = parser.parse_args()
    geodata = ROOT / ".geosvc"
    build_geodata(geodata)
    # faults are measured here, not tenancy: the limits stay out of reach
    extra = {**UNLIMITED_TENANTS, "GEOSVC_FREE_QUOTA": str(args.free_quota), "GEOSVC_ENV": args.env}
    aof = None if args.aof == "no" else args.aof
    with contextlib.ExitStack() as resources:
        if args.broker == "rabbitmq":
            extra["GEOSVC_BROKER_URL"] = resources.enter_context(rabbitmq_vhost())
        stack = resources.enter_context(
            production_shape(aof=aof, geodata_dir=geodata, extra_env=extra)
        )
        print(
            f"stack up in {stack.workdir} (redis aof={args.aof}, env={args.env}, "
            f"broker={args.broker})",
            flush=True,
        )
        recover_between_drills(stack)
        results = asyncio.run(run_all(stack, args))
    print_table(results)


if __name__ == "__main__":
    main()
