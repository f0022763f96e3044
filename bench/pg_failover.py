"""PostgreSQL failover drill: kill -9 the primary under load, promote its streaming standby.

The production shape (`bench/drill_stack.py`) on a primary and a `pg_basebackup -R`
standby (`bench/pg_replica.py`), reached through one libpq multi-host URL with
`target_session_attrs=read-write`. Several accounts call tools over /mcp, and one more
writes through the control plane (PUT /usage/cap) every 0.2 s. Then, per mode:

  once the ledger holds --warm rows and the drains keep up,
  the primary's WAL sender is stopped for --lag seconds (a lagging standby; 0: none),
  the primary and all its backends get SIGKILL (the host is gone),
  --gap seconds later (detection and decision) the standby is promoted,
  the load goes on for --after seconds, and the ledger settles.

What the dead primary had committed is read from its own data directory afterwards
(started on a port the app does not know: crash recovery replays its WAL), and what the
standby held at the kill from the standby itself (hot standby, read before promotion).
Per mode it prints: tool calls answered, refused as retryable, other failures, hung; HTTP
5xx/500; control-plane writes answered, refused (503), 500, and the time from promotion
to the first write answered; the ledger: rows the old primary committed, of those missing
on the standby at the kill, and missing at the end (lost); calls charged twice (ledger
rows above a client's successes, duplicate call ids); calls served but not in the ledger.

    .venv/bin/python bench/pg_failover.py [--modes sync,async] [--accounts 4] [--clients 2]
        [--before 8] [--warm 100] [--lag 2] [--gap 2] [--after 10]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import itertools
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drill_stack import ROOT, UNLIMITED_TENANTS, Stack, build_geodata, production_shape  # noqa: E402
from fault_drills import Calls, Load, account  # noqa: E402
from pg_replica import StreamingPair  # noqa: E402

RETRYABLE = {"UNAVAILABLE", "DEADLINE_EXCEEDED", "RATE_LIMITED"}
CALL_IDS = "SELECT call_id FROM usage_events"


@dataclass
class Writes:
    """The control-plane prober's answers, with the time of each 200."""

    statuses: collections.Counter[str] = field(default_factory=collections.Counter)
    ok_times: list[float] = field(default_factory=list)
    retry_after: int = 0


@dataclass
class Outcome:
    mode: str
    lag_s: float
    calls: Calls
    writes: Writes
    write_resume_s: float | None
    call_gap_s: float
    old_primary: int
    missing_at_kill: int
    lost_rows: int
    served_not_billed: int
    charged_twice: int
    duplicate_ids: int
    counter_off: int
    outbox_at_promotion: int
    notes: list[str] = field(default_factory=list)

    @property
    def retryable(self) -> int:
        return sum(v for k, v in self.calls.failed.items() if k in RETRYABLE)

    @property
    def other_failures(self) -> int:
        return sum(v for k, v in self.calls.failed.items() if k not in RETRYABLE)


async def probe_writes(stack: Stack, writes: Writes, running: asyncio.Event) -> None:
    """PUT /usage/cap on an account of its own, every 0.2 s, until `running` clears."""
    _, _, http = await asyncio.to_thread(account, stack, standard=True)
    cap = 1_000_000
    try:
        while running.is_set():
            cap += 1
            try:
                answer = await asyncio.to_thread(
                    http.put, "/usage/cap", json={"cap": cap}, headers={"Origin": stack.base_url},
                    timeout=15,
                )  # fmt: skip
                writes.statuses[str(answer.status_code)] += 1
                writes.retry_after += "retry-after" in answer.headers
                if answer.status_code == 200:
                    writes.ok_times.append(time.monotonic())
            except httpx.HTTPError as exc:
                writes.statuses[type(exc).__name__] += 1
            await asyncio.sleep(0.2)
    finally:
        http.close()


def ids(rows: list[tuple[object, ...]]) -> set[str]:
    return {str(row[0]) for row in rows}


def per_account(stack: Stack, user_ids: list[str]) -> dict[str, int]:
    rows = stack.postgres.query(
        "SELECT user_id, count(*) FROM usage_events WHERE user_id = ANY(%s) GROUP BY user_id",
        user_ids,
    )
    return {str(user): int(count) for user, count in rows}  # type: ignore[call-overload]


async def settle(stack: Stack, expected: dict[str, int], deadline_s: float) -> dict[str, int]:
    """Wait (bounded) until every outbox list is empty and each account's ledger holds at
    least its clients' successes."""
    deadline = time.monotonic() + deadline_s
    counts: dict[str, int] = {}
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            counts = await asyncio.to_thread(per_account, stack, list(expected))
            if all(counts.get(u, 0) >= n for u, n in expected.items()):
                if await asyncio.to_thread(total_outbox, stack) == 0:
                    return counts
        await asyncio.sleep(0.5)
    return counts


def total_outbox(stack: Stack) -> int:
    client = stack.redis.client()
    prefix = stack.env["GEOSVC_REDIS_KEY_PREFIX"]
    lists = [k for k in client.scan_iter(f"{prefix}usage:outbox*") if not k.endswith(":lock")]
    return sum(int(client.llen(k)) for k in lists)


def counters(stack: Stack, user_ids: list[str]) -> dict[str, int]:
    from app.kit.clock import period_of, utcnow

    client = stack.redis.client()
    prefix = stack.env["GEOSVC_REDIS_KEY_PREFIX"]
    out = {}
    for user in user_ids:
        value = client.hget(f"{prefix}usage:{{{user}}}:{period_of(utcnow())}", "used")
        out[user] = int(value) if value is not None else 0
    return out


async def drill(stack: Stack, pair: StreamingPair, mode: str, args: argparse.Namespace) -> Outcome:
    made = [await asyncio.to_thread(account, stack) for _ in range(args.accounts)]
    for _, _, http in made:
        http.close()
    loads = [Load(stack, key, deadline_s=args.deadline) for _, key, _ in made]
    for load in loads:
        load.start(clients=args.clients)
    writes, running = Writes(), asyncio.Event()
    running.set()
    prober = asyncio.create_task(probe_writes(stack, writes, running))
    began = time.monotonic()
    await asyncio.sleep(args.before)
    # the fault comes once the drains keep up: every account in the ledger, at least
    # --warm rows in all, the outbox short
    user_ids = [user for user, _, _ in made]
    deadline = time.monotonic() + 60
    rows: dict[str, int] = {}
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            rows = await asyncio.to_thread(per_account, stack, user_ids)
            if len(rows) == len(user_ids) and sum(rows.values()) >= args.warm:
                if await asyncio.to_thread(total_outbox, stack) <= args.accounts * args.clients:
                    break
        await asyncio.sleep(0.2)
    phases = [
        f"load {time.monotonic() - began:.1f} s before the fault, "
        f"{sum(rows.values())} ledger rows then"
    ]
    if args.lag > 0:
        await asyncio.to_thread(pair.kill_primary_behind, args.lag)
    else:
        await asyncio.to_thread(pair.kill_primary)
    standby_rows = ids(await asyncio.to_thread(pair.standby_rows, CALL_IDS))
    await asyncio.sleep(args.gap)
    await asyncio.to_thread(pair.promote)
    promoted = time.monotonic()
    outbox_at_promotion = await asyncio.to_thread(total_outbox, stack)
    await asyncio.sleep(args.after)
    running.clear()
    results = [await load.stop() for load in loads]
    await prober
    served = {user: calls.ok for user, calls in zip(user_ids, results, strict=True)}
    settling = time.monotonic()
    ledger = await settle(stack, served, args.settle)
    phases.append(f"ledger settled in {time.monotonic() - settling:.1f} s")
    old = ids(await asyncio.to_thread(pair.old_primary_rows, CALL_IDS))
    final_rows = await asyncio.to_thread(stack.postgres.query, CALL_IDS)
    final = ids(final_rows)
    counted = await asyncio.to_thread(counters, stack, user_ids)
    calls = Calls.merged(results)
    after = [t for t in writes.ok_times if t > promoted]
    every_ok = sorted(t for c in results for t in c.ok_times)
    return Outcome(
        mode=mode,
        lag_s=args.lag,
        calls=calls,
        writes=writes,
        write_resume_s=(after[0] - promoted) if after else None,
        call_gap_s=max((b - a for a, b in itertools.pairwise(every_ok)), default=0.0),
        old_primary=len(old),
        missing_at_kill=len(old - standby_rows),
        lost_rows=len(old - final),
        served_not_billed=sum(max(0, served[u] - ledger.get(u, 0)) for u in user_ids),
        charged_twice=sum(max(0, ledger.get(u, 0) - served[u]) for u in user_ids),
        duplicate_ids=len(final_rows) - len(final),
        counter_off=sum(abs(counted[u] - ledger.get(u, 0)) for u in user_ids),
        outbox_at_promotion=outbox_at_promotion,
        notes=["; ".join(phases)],
    )


def print_table(outcomes: list[Outcome]) -> None:
    header = (
        f"{'mode':<6}{'lag s':>6}{'calls':>7}{'OK':>7}{'retry':>6}{'other':>6}{'hung':>5}"
        f"{'5xx':>5}{'500':>5} | {'writes':>6}{'ok':>5}{'503':>5}{'500':>5}{'resume s':>9}"
        f" | {'old rows':>8}{'gap@kill':>9}{'lost':>5}{'unbilled':>9}{'twice':>6}"
        f"{'dup id':>7}{'ctr off':>8}{'outbox':>7}"
    )
    print(header)
    print("-" * len(header))
    for o in outcomes:
        fivexx = sum(v for k, v in o.calls.statuses.items() if k >= 500)
        w = o.writes.statuses
        resume = "never" if o.write_resume_s is None else f"{o.write_resume_s:.2f}"
        print(
            f"{o.mode:<6}{o.lag_s:>6g}{o.calls.total():>7}{o.calls.ok:>7}{o.retryable:>6}"
            f"{o.other_failures:>6}{o.calls.hung:>5}{fivexx:>5}{o.calls.statuses[500]:>5} | "
            f"{sum(w.values()):>6}{w['200']:>5}{w['503']:>5}{w['500']:>5}{resume:>9} | "
            f"{o.old_primary:>8}{o.missing_at_kill:>9}{o.lost_rows:>5}{o.served_not_billed:>9}"
            f"{o.charged_twice:>6}{o.duplicate_ids:>7}{o.counter_off:>8}{o.outbox_at_promotion:>7}"
        )
        failed = ", ".join(f"{k}={v}" for k, v in o.calls.failed.most_common()) or "-"
        print(f"       tool calls failed by code: {failed}; longest pause between "
              f"successes {o.call_gap_s:.2f} s; writes: {dict(w)}")  # fmt: skip
        for note in o.notes:
            print(f"       {note}")


def run_mode(mode: str, args: argparse.Namespace, geodata: Path) -> Outcome:
    holder: dict[str, StreamingPair] = {}

    def database(workdir: Path) -> StreamingPair:  # production_shape's workdir
        holder["pair"] = StreamingPair(workdir, synchronous=mode == "sync")
        return holder["pair"]

    extra = {**UNLIMITED_TENANTS, "GEOSVC_ENV": "development"}
    started = time.monotonic()
    with production_shape(
        aof="everysec", geodata_dir=geodata, extra_env=extra, workers=args.workers,
        database=database,
    ) as stack:  # fmt: skip
        pair = holder["pair"]
        state = pair.replication_state()
        up = time.monotonic() - started
        outcome = asyncio.run(drill(stack, pair, mode, args))
        outcome.notes.append(f"standby before the kill: {state}; stack up in {up:.1f} s")
        return outcome


def options(**overrides: Any) -> argparse.Namespace:
    defaults = {
        "modes": "sync,async", "accounts": 4, "clients": 2, "before": 8.0, "warm": 100, "lag": 2.0,
        "gap": 2.0, "after": 10.0, "settle": 60.0, "deadline": 30.0, "workers": 2,
    }  # fmt: skip
    return argparse.Namespace(**{**defaults, **overrides})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    defaults = vars(options())
    for name, value in defaults.items():
        parser.add_argument(f"--{name}", type=type(value), default=value)
    args = parser.parse_args()
    geodata = ROOT / ".geosvc"
    build_geodata(geodata)
    outcomes = []
    for mode in args.modes.split(","):
        print(f"mode {mode} ...", flush=True)
        outcomes.append(run_mode(mode, args, geodata))
    print_table(outcomes)


if __name__ == "__main__":
    main()
