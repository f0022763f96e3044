"""The usage outbox drain: batches, idempotency, one drain per bucket at a time."""

from __future__ import annotations

import secrets
import threading
import time
from datetime import timedelta

import pytest
from sqlmodel import Session

from app.kit.clock import as_utc, period_of, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.redis_client import sync_redis
from app.metering.keys import legacy_outbox_keys, outbox_bucket, outbox_key, outbox_lock_key
from app.metering.ledger import ledger_total
from app.metering.outbox import (
    LOCK_TTL_MS,
    buckets,
    drain,
    encode,
    outbox_stats,
    waiting_buckets,
)
from app.models import ApiKey
from app.runtime import reload_settings
from tests.metering.conftest import Accounts
from tests.metering.test_ledger import events_for


@pytest.fixture(autouse=True)
def own_outbox(accounts: Accounts, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key prefix of its own: workers of other tests drain the shared outbox."""
    monkeypatch.setenv("GEOSVC_REDIS_KEY_PREFIX", f"outbox-test-{secrets.token_hex(4)}:")
    reload_settings()


def push(events: list) -> None:
    sync_redis().rpush(outbox_key(), *(encode(event) for event in events))


class TestDrain:
    def test_moves_everything_in_batches_and_stores_duplicates_once(
        self, accounts: Accounts
    ) -> None:
        user_id = accounts.new_id()
        events = events_for(user_id, 1_200)
        push(events)
        push(events[:10])  # left behind by a drain that died before its trim

        inserted = drain(new_session, sync_redis())

        assert inserted == 1_200
        assert sync_redis().llen(outbox_key()) == 0
        with new_session() as session:
            assert ledger_total(session, user_id, events[0].period) == 1_200

    def test_a_running_drain_is_left_alone(self, accounts: Accounts) -> None:
        user_id = accounts.new_id()
        push(events_for(user_id, 3))
        sync_redis().set(outbox_lock_key(), "someone-else", px=60_000)
        try:
            assert drain(new_session, sync_redis()) == 0
            assert sync_redis().llen(outbox_key()) == 3
        finally:
            sync_redis().delete(outbox_lock_key())

        assert drain(new_session, sync_redis()) == 3


class TestKeysLastUsed:
    def test_the_drain_moves_each_keys_last_use_forward_only(
        self, accounts: Accounts, session: Session
    ) -> None:
        user_id = accounts.create(session)
        key_id = secrets.token_hex(8)
        session.add(ApiKey(key_id=key_id, user_id=user_id, name="k", secret_hash="0" * 64))
        session.commit()
        latest = utcnow().replace(microsecond=0) - timedelta(minutes=1)
        events = events_for(user_id, 2, at=latest - timedelta(hours=1))
        events += events_for(user_id, 1, at=latest)
        push([event.model_copy(update={"key_id": key_id}) for event in events])

        drain(new_session, sync_redis())
        late = events_for(user_id, 1, at=latest - timedelta(days=1))  # replayed late
        push([event.model_copy(update={"key_id": key_id}) for event in late])
        drain(new_session, sync_redis())

        session.expire_all()
        key = session.get(ApiKey, key_id)
        assert key is not None
        assert key.last_used_at is not None
        assert as_utc(key.last_used_at) == latest


class TestDrainLock:
    def test_a_dead_drainers_lock_is_taken_over_within_its_short_lifetime(
        self, accounts: Accounts
    ) -> None:
        user_id = accounts.new_id()
        push(events_for(user_id, 3))
        # a drain that died mid-drain: its lock is no longer renewed and runs out
        sync_redis().set(outbox_lock_key(), "dead-drainer", px=LOCK_TTL_MS - 2_500)

        assert drain(new_session, sync_redis()) == 3

        assert sync_redis().llen(outbox_key()) == 0
        assert not sync_redis().exists(outbox_lock_key())

    def test_a_running_drain_renews_its_lock_past_the_lifetime(self, accounts: Accounts) -> None:
        user_id = accounts.new_id()
        push(events_for(user_id, 3))
        release = threading.Event()

        def slow_session() -> Session:  # a database that answers slowly
            release.wait(timeout=30)
            return new_session()

        drainer = threading.Thread(target=drain, args=(slow_session, sync_redis()))
        drainer.start()
        try:
            deadline = time.monotonic() + 10
            while not sync_redis().exists(outbox_lock_key()):
                assert time.monotonic() < deadline, "the drain never took the lock"
                time.sleep(0.02)
            held_until = time.monotonic() + LOCK_TTL_MS / 1000 + 1.5
            while time.monotonic() < held_until:
                assert sync_redis().exists(outbox_lock_key()), "the lock ran out mid-drain"
                time.sleep(0.1)
        finally:
            release.set()
            drainer.join(timeout=30)
        assert sync_redis().llen(outbox_key()) == 0
        assert not sync_redis().exists(outbox_lock_key())


class TestOutboxStats:
    def test_depth_and_age_of_the_oldest_event(self, accounts: Accounts) -> None:
        assert outbox_stats().depth == 0
        assert outbox_stats().oldest_age_s is None
        user_id = accounts.new_id()
        push(events_for(user_id, 2, at=utcnow() - timedelta(seconds=30)))
        push(events_for(user_id, 1))

        stats = outbox_stats()

        assert stats.depth == 3
        assert stats.oldest_age_s is not None
        assert 30 <= stats.oldest_age_s < 60


class TestBuckets:
    """The outbox in several lists, each drained by its own task and lock (issue 56)."""

    def test_drains_of_every_bucket_at_once_store_each_event_once(
        self, accounts: Accounts, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("GEOSVC_OUTBOX_BUCKETS", "4")
        reload_settings()
        users = [accounts.new_id() for _ in range(12)]
        assert len({outbox_bucket(user_id) for user_id in users}) > 1
        for user_id in users:
            events = events_for(user_id, 30)
            key = outbox_key(outbox_bucket(user_id))
            sync_redis().rpush(key, *(encode(event) for event in events))
            sync_redis().rpush(key, *(encode(event) for event in events[:5]))  # twice

        inserted: list[int] = []
        # two drains of each bucket at once: each bucket's lock lets one at a time
        drains = [
            threading.Thread(
                target=lambda b=b: inserted.append(drain(new_session, sync_redis(), b))
            )
            for b in (*buckets(), *buckets())
        ]
        for thread in drains:
            thread.start()
        for thread in drains:
            thread.join(timeout=60)

        assert sum(inserted) == 12 * 30
        assert waiting_buckets() == []
        with new_session() as session:
            period = period_of(utcnow())
            assert {ledger_total(session, user_id, period) for user_id in users} == {30}

    def test_bucket_zero_empties_the_single_list_of_older_versions(
        self, accounts: Accounts
    ) -> None:
        if get_settings().redis_cluster:
            pytest.skip("a cluster is new: it holds no list of the older versions")
        user_id = accounts.new_id()
        legacy, _lock = legacy_outbox_keys()
        sync_redis().rpush(legacy, *(encode(event) for event in events_for(user_id, 3)))
        assert waiting_buckets() == [0]

        assert drain(new_session, sync_redis(), 0) == 3

        assert sync_redis().llen(legacy) == 0
        with new_session() as session:
            assert ledger_total(session, user_id, period_of(utcnow())) == 3
