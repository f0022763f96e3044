"""Billing and beat tasks through the broker, run by a real `geosvc worker` process."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import pytest
from sqlmodel import Session, func, select

from app.kit.clock import iso_ms, period_end, period_of, previous_period, utcnow
from app.kit.db import new_session
from app.kit.errors import QuotaExceeded
from app.kit.redis_client import sync_redis
from app.metering.keys import outbox_key
from app.metering.ledger import ledger_total
from app.metering.outbox import DRAIN_TASK, encode
from app.metering.schemas import UsageEventIn
from app.metering.service import reserve, send_commit
from app.models import UsageEvent, UsagePeriod, User
from app.plans import Plan
from tests.metering.conftest import Accounts, call_id, commit, put_in_outbox
from tests.metering.test_ledger import events_for
from tests.support.celery_worker import CeleryWorker
from tests.support.fixtures import Backend
from tests.support.zygote import ChildProcess, start_command

T = TypeVar("T")
DEADLINE_S = 30.0


def wait_for(probe: Callable[[Session], T], done: Callable[[T], bool]) -> T:
    """Poll the database (a fresh session each time) until `done`, with a deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        with new_session() as session:
            value = probe(session)
        if done(value):
            return value
        assert time.monotonic() < deadline, f"gave up waiting; last value {value!r}"
        time.sleep(0.05)


def count_events(user_id: str) -> Callable[[Session], int]:
    def probe(session: Session) -> int:
        statement = select(func.count()).select_from(UsageEvent)
        return int(session.exec(statement.where(UsageEvent.user_id == user_id)).one())

    return probe


@pytest.fixture
def worker(celery_worker: CeleryWorker, accounts: Accounts) -> CeleryWorker:
    return celery_worker


def drain(worker: CeleryWorker) -> int:
    """Run one outbox drain on the worker; how many events were new to the ledger."""
    result = worker.client.send_task(DRAIN_TASK, queue="billing", ignore_result=False)
    return int(result.get(timeout=DEADLINE_S))


def drained_into_ledger(worker: CeleryWorker, events: list[UsageEventIn]) -> None:
    put_in_outbox(events)
    worker.client.send_task(DRAIN_TASK, queue="billing")
    user_id = events[0].user_id
    wait_for(count_events(user_id), lambda n: n >= len(events))


class TestDrainUsageOutbox:
    def test_the_same_events_drained_twice_are_in_the_ledger_once(
        self, worker: CeleryWorker, accounts: Accounts
    ) -> None:
        user_id = accounts.new_id()
        events = events_for(user_id, 40)

        put_in_outbox(events)
        put_in_outbox(events)  # as a drain that died before trimming would leave them
        drain(worker)
        drain(worker)

        assert wait_for(count_events(user_id), lambda n: n >= 40) == 40
        assert wait_for(lambda _s: sync_redis().llen(outbox_key()), lambda n: n == 0) == 0

    async def test_committed_calls_reach_the_ledger_once_through_the_outbox(
        self, worker: CeleryWorker, accounts: Accounts
    ) -> None:
        user_id, now = accounts.new_id(), utcnow()
        calls = [call_id() for _ in range(5)]
        for call in calls:
            reservation = await reserve(user_id, Plan.STANDARD)
            await (await send_commit(reservation, call_id=call, key_id="k1", tool="geocode"))()
        # The first event once more (as a drain that died before trimming would leave it).
        duplicate = UsageEventIn(
            call_id=calls[0],
            user_id=user_id,
            key_id="k1",
            tool="geocode",
            credits=1,
            period=period_of(now),
            created_at=now,
        )
        sync_redis().rpush(outbox_key(), encode(duplicate))
        worker.client.send_task(DRAIN_TASK, queue="billing")

        assert wait_for(count_events(user_id), lambda n: n >= 5) == 5
        with new_session() as session:
            assert ledger_total(session, user_id, period_of(now)) == 5
        assert wait_for(lambda _s: sync_redis().llen(outbox_key()), lambda n: n == 0) == 0

    def test_invalid_events_are_skipped_not_the_batch(
        self, worker: CeleryWorker, accounts: Accounts
    ) -> None:
        user_id = accounts.new_id()
        good = events_for(user_id, 2)
        bad = good[0].model_dump(mode="json") | {"call_id": call_id(), "period": "2026-13"}

        sync_redis().rpush(outbox_key(), json.dumps(bad))
        put_in_outbox(good)
        drain(worker)

        assert wait_for(count_events(user_id), lambda n: n >= 2) == 2
        assert wait_for(lambda _s: sync_redis().llen(outbox_key()), lambda n: n == 0) == 0


def start_beat(backend: Backend, data_dir: Path) -> ChildProcess:
    """`geosvc beat` on the backend, its schedule file and log in `data_dir` (no schedule
    file yet: as on a new host); forked from the command zygote as the workers are."""
    env = backend.env(GEOSVC_DATA_DIR=str(data_dir))
    return start_command(env, ["beat", "--loglevel", "info"], data_dir / "beat.log")


def stop(process: ChildProcess) -> None:
    process.terminate()
    process.wait(timeout=30)


class TestReconcileTask:
    """The free quota is small_quotas' 10 in this process, where the reservations are
    made (the worker's drain and reconciliation read no quota)."""

    async def test_flushed_redis_is_repaired_and_the_free_cap_holds(
        self, worker: CeleryWorker, accounts: Accounts, small_quotas: tuple[int, int]
    ) -> None:
        now = utcnow()
        period = period_of(now)
        free_quota, _ = small_quotas
        light, heavy = accounts.new_id(), accounts.new_id()
        for user_id, calls in ((light, 7), (heavy, free_quota)):
            reservations = [await reserve(user_id, Plan.FREE) for _ in range(calls)]
            for reservation in reservations:
                await commit(reservation)
        drain(worker)
        wait_for(count_events(heavy), lambda n: n >= free_quota)
        wait_for(count_events(light), lambda n: n >= 7)
        with pytest.raises(QuotaExceeded):
            await reserve(heavy, Plan.FREE)

        accounts.forget_counters()  # Redis flushed
        result = worker.client.send_task("metering.reconcile", queue="billing").get(
            timeout=DEADLINE_S
        )

        assert result["period"] == period
        repaired = {r["userId"]: (r["before"], r["after"]) for r in result["repairs"]}
        assert repaired[light] == (None, 7)
        assert repaired[heavy] == (None, free_quota)
        assert (accounts.used(light, period), accounts.used(heavy, period)) == (7, free_quota)
        with pytest.raises(QuotaExceeded):
            await reserve(heavy, Plan.FREE)

    async def test_flushed_redis_keeps_the_free_cap_before_reconciliation(
        self, worker: CeleryWorker, accounts: Accounts, small_quotas: tuple[int, int]
    ) -> None:
        """The first reservation after a flush rebuilds the counter from the ledger."""
        period = period_of(utcnow())
        free_quota, _ = small_quotas
        heavy = accounts.new_id()
        for reservation in [await reserve(heavy, Plan.FREE) for _ in range(free_quota)]:
            await commit(reservation)
        drain(worker)
        wait_for(count_events(heavy), lambda n: n >= free_quota)

        accounts.forget_counters()  # Redis flushed, no reconciliation yet
        with pytest.raises(QuotaExceeded):
            await reserve(heavy, Plan.FREE)
        assert accounts.used(heavy, period) == free_quota


class TestRolloverTask:
    def test_runs_twice_and_finalises_once(self, worker: CeleryWorker, accounts: Accounts) -> None:
        period = period_of(utcnow())
        midnight = period_end(period)
        user_id = accounts.new_id()
        last_moment = midnight - timedelta(milliseconds=100)
        drained_into_ledger(worker, events_for(user_id, 3, at=last_moment))

        kwargs = {"now": iso_ms(midnight + timedelta(minutes=2))}
        runs = [
            worker.client.send_task("metering.rollover", kwargs=kwargs, queue="billing")
            for _ in range(2)
        ]
        summaries = [run.get(timeout=DEADLINE_S) for run in runs]

        assert all(summary["settleAt"] is None for summary in summaries)
        assert wait_for(self.rows(user_id), bool) == [(period, 3, 0)]

    def test_at_midnight_it_waits_for_calls_in_flight(
        self, worker: CeleryWorker, accounts: Accounts
    ) -> None:
        period = period_of(utcnow())
        midnight = period_end(period)
        user_id = accounts.new_id()
        drained_into_ledger(worker, events_for(user_id, 2, period=period))

        kwargs = {"now": iso_ms(midnight), "settle_s": 1}
        runs = [
            worker.client.send_task("metering.rollover", kwargs=kwargs, queue="billing")
            for _ in range(2)
        ]
        summaries = [run.get(timeout=DEADLINE_S) for run in runs]

        # a run that overlapped the other stood aside (its lock); each run that went ahead
        # re-scheduled itself for the end of the settle window; one row results
        ran = [s for s in summaries if not s.get("skipped")]
        assert ran
        assert {s["settleAt"] for s in ran} == {iso_ms(midnight + timedelta(seconds=1))}
        assert wait_for(self.rows(user_id), bool) == [(period, 2, 0)]

    @staticmethod
    def rows(user_id: str) -> Callable[[Session], list[tuple[str, int, int]]]:
        def probe(session: Session) -> list[tuple[str, int, int]]:
            statement = select(UsagePeriod).where(UsagePeriod.user_id == user_id)
            return [(row.period, row.used, row.overage) for row in session.exec(statement)]

        return probe


class TestBeatStart:
    def test_a_beat_started_afresh_after_the_month_boundary_finalises_the_missed_month(
        self,
        worker: CeleryWorker,
        accounts: Accounts,
        backend: Backend,
        tmp_path: Path,
    ) -> None:
        last_month = previous_period(period_of(utcnow()))
        user_id = accounts.new_id()
        with new_session() as session:
            session.add(User(id=user_id, email=f"{user_id}@example.com", password_hash="x"))
            session.commit()
        at = period_end(last_month) - timedelta(hours=1)
        drained_into_ledger(worker, events_for(user_id, 3, period=last_month, at=at))

        # no schedule file: as on a new host, so the 1st-of-month crontab is not due
        beat = start_beat(backend, tmp_path)
        try:
            rows = wait_for(TestRolloverTask.rows(user_id), bool)
        finally:
            stop(beat)

        assert rows == [(last_month, 3, 0)]

    def test_events_that_no_call_asked_a_drain_for_reach_the_ledger_through_beat(
        self, worker: CeleryWorker, accounts: Accounts, backend: Backend, tmp_path: Path
    ) -> None:
        """The safety net: a drain request lost with its api process (or in a Redis
        restart) leaves events no call pokes for; beat, which sends a drain only while
        events wait, sees them and sends one."""
        drain(worker)  # whatever the worker asked for at its start is done: beat's turn
        user_id = accounts.new_id()
        beat = start_beat(backend, tmp_path)
        try:
            put_in_outbox(events_for(user_id, 5))
            wait_for(count_events(user_id), lambda n: n == 5)
        finally:
            stop(beat)

        assert "Sending due task drain-usage-outbox" in (tmp_path / "beat.log").read_text()
