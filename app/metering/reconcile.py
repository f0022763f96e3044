"""Reconciliation: make each account's Redis counter equal its ledger total (beat, 5 min).

The ledger lags Redis: a commit counts at once, its usage event reaches the ledger a
moment later through the `billing` queue. A plain "SET used = ledger total" would wipe
credits of calls whose events are still pending, so the two directions differ:

- Up (Redis below the ledger: a flushed or lost Redis, a failed commit): the ledger only
  holds successful calls, so it is a lower bound and the counter is raised to it at once.
  A counter missing altogether is recreated from the ledger, so a cold Redis enforces the
  free cap again after one run.
- Down (Redis above the ledger: a commit whose event was never enqueued, a double commit):
  only what *persisted* is taken off. Each run stores a snapshot (used, time) in the
  counter hash; the next run compares that snapshot with the ledger's events created
  before the snapshot time. Credits counted at the snapshot that still have no event
  five minutes later were lost, and are removed with a relative decrement, so commits
  made since are kept. The task runs on the `billing` queue behind the events it waits
  for. A flush or a concurrent run replaces the snapshot, and then no down repair is
  made that round.

Clock skew between api and worker hosts can misplace an event around the snapshot time;
the error is bounded by the skew and the next run's up repair undoes a wrong decrement.
Every repair is logged and counted in the Redis hash `keys.repairs_key()`.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import redis
from sqlmodel import Session

from app.clock import iso_ms, period_of
from app.metering.keys import counter_key, counter_pattern, repairs_key, user_of_counter
from app.metering.ledger import ledger_total_before, ledger_totals
from app.metering.scripts import reconcile_script
from app.metering.service import counter_ttl_s

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Repair:
    user_id: str
    period: str
    before: int | None  # None: Redis had no counter
    after: int


@dataclass
class ReconcileResult:
    period: str
    checked: int = 0
    repairs: list[Repair] = field(default_factory=list)


def _snapshots(store: redis.Redis, period: str) -> dict[str, tuple[int, str] | None]:
    """Every account with a counter in `period` -> its snapshot (used, time) if any."""
    keys = sorted(set(store.scan_iter(match=counter_pattern(period), count=1000)))
    pipe = store.pipeline(transaction=False)
    for key in keys:
        pipe.hmget(key, ["snap_used", "snap_at"])
    snapshots: dict[str, tuple[int, str] | None] = {}
    for key, (snap_used, snap_at) in zip(keys, pipe.execute(), strict=True):
        has_snapshot = snap_used is not None and snap_at is not None
        snapshots[user_of_counter(key)] = (int(snap_used), snap_at) if has_snapshot else None
    return snapshots


def reconcile(session: Session, store: redis.Redis, *, now: datetime) -> ReconcileResult:
    period = period_of(now)
    snapshots = _snapshots(store, period)
    snap_times = Counter(snap[1] for snap in snapshots.values() if snap is not None)
    common = snap_times.most_common(1)[0][0] if snap_times else iso_ms(now)
    totals = ledger_totals(session, period, before=datetime.fromisoformat(common))
    result = ReconcileResult(period=period)
    taken_at = iso_ms(now)
    for user_id in sorted(set(snapshots) | set(totals)):
        total, early = totals.get(user_id, (0, 0))
        snapshot = snapshots.get(user_id)
        excess, snap_at = 0, ""
        if snapshot is not None:
            snap_used, snap_at = snapshot
            if snap_at != common:
                early = ledger_total_before(
                    session, user_id, period, datetime.fromisoformat(snap_at)
                )
            excess = max(0, snap_used - early)
        before, after = reconcile_script.run(
            store,
            [counter_key(user_id, period)],
            [total, excess, snap_at, taken_at, counter_ttl_s(period)],
        )
        result.checked += 1
        before, after = int(before), int(after)
        if before != after and not (before == -1 and after == 0):
            repair = Repair(user_id, period, None if before == -1 else before, after)
            result.repairs.append(repair)
            _count(store, repair)
    return result


def _count(store: redis.Redis, repair: Repair) -> None:
    before = repair.before or 0
    direction = "up" if repair.after > before else "down"
    logger.warning(
        "reconciled %s %s: Redis counter %s -> %s (ledger is the truth; repaired %s)",
        repair.user_id,
        repair.period,
        "missing" if repair.before is None else repair.before,
        repair.after,
        direction,
    )
    pipe = store.pipeline(transaction=False)
    pipe.hincrby(repairs_key(), direction, 1)
    pipe.hincrby(repairs_key(), f"credits_{direction}", abs(repair.after - before))
    pipe.execute()
