"""Reconciliation: make each account's Redis counter equal its ledger total (beat, 5 min).

The ledger lags Redis: a commit counts at once, its usage event reaches the ledger a
moment later through the `billing` queue. A plain "SET used = ledger total" would wipe
credits of calls whose events are still pending, so the two directions differ:

- Up (Redis below the ledger: a flushed or lost Redis, a failed commit): the ledger only
  holds successful calls, so it is a lower bound and the counter is raised to it at once.
  A counter missing altogether is recreated from the ledger, so a cold Redis enforces the
  free cap again after one run.
- Down (Redis above the ledger: a commit whose event was never enqueued, a double commit):
  only what *persisted* is taken off. At the end of each run every counter's (used, time)
  is snapshotted in one pipeline; the next run compares that snapshot with the ledger's
  events created before the snapshot time (plus `SNAPSHOT_MARGIN` for clock skew).
  Credits counted at the snapshot that still have no such event five minutes later were
  lost, and are removed with a relative decrement, so commits made since are kept. The
  task runs on the `billing` queue, behind the events it waits for. The repair consumes
  the snapshot it used, so overlapping runs cannot take the same excess off twice, and
  a flush (which takes the snapshot with it) means no down repair that round.

What can still go wrong is bounded and self-correcting: an event stamped more than the
margin after its commit (skew, a stalled api thread) looks lost and is taken off, and
the next run's up repair puts it back once the event is in the ledger; a lost credit on
an account whose newer events land within the margin after a snapshot is hidden by them
that round (an undercount of the repair, never of usage).
Every repair is logged and counted in the Redis hash `keys.repairs_key()`.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import redis
from sqlmodel import Session

from app.kit.clock import iso_ms, period_of, utcnow
from app.metering.keys import counter_key, counter_pattern, repairs_key, user_of_counter
from app.metering.ledger import ledger_total_before, ledger_totals
from app.metering.scripts import reconcile_script, snapshot_script
from app.metering.service import counter_ttl_s

logger = logging.getLogger(__name__)

RECONCILE_TASK = "metering.reconcile"

# Clock skew between api hosts (which stamp events) and the worker (which stamps
# snapshots) that is tolerated without mistaking an event for a lost one.
SNAPSHOT_MARGIN = timedelta(seconds=1)


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
    common = snap_times.most_common(1)[0][0] if snap_times else None
    totals = ledger_totals(session, period, before=_cutoff(common) if common else now)
    result = ReconcileResult(period=period)
    for user_id in sorted(set(snapshots) | set(totals)):
        total, early = totals.get(user_id, (0, 0))
        snapshot = snapshots.get(user_id)
        excess, snap_at = 0, ""
        if snapshot is not None:
            snap_used, snap_at = snapshot
            if snap_at != common:
                early = ledger_total_before(session, user_id, period, _cutoff(snap_at))
            excess = max(0, snap_used - early)
        before, after = reconcile_script.run(
            store, [counter_key(user_id, period)], [total, excess, snap_at, counter_ttl_s(period)]
        )
        result.checked += 1
        before, after = int(before), int(after)
        if before != after:
            repair = Repair(user_id, period, None if before == -1 else before, after)
            result.repairs.append(repair)
            _count(store, repair)
    _take_snapshots(store, period, sorted(set(snapshots) | set(totals)), now)
    return result


def _cutoff(snap_at: str) -> datetime:
    """Events created before this are the ones a snapshot taken at `snap_at` counted."""
    return datetime.fromisoformat(snap_at) + SNAPSHOT_MARGIN


def _take_snapshots(store: redis.Redis, period: str, user_ids: list[str], now: datetime) -> None:
    """Snapshot every counter in one pipeline, so the label is true for all of them.

    Taken after the repairs (which can take a while over many accounts), not at the
    start of the run: a commit between the label's time and the snapshot would otherwise
    be counted without its event being "before" the label, and look lost next time.
    """
    taken_at = iso_ms(max(now, utcnow()))
    pipe = store.pipeline(transaction=False)
    for user_id in user_ids:
        snapshot_script.queue(pipe, [counter_key(user_id, period)], [taken_at])
    pipe.execute()


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
