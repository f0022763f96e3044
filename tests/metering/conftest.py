"""Metering fixtures: accounts whose Redis keys are deleted afterwards (the shared Redis is
never flushed), and a Redis-only configuration for tests that need no database."""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sqlmodel import Session

from app.kit.config import get_settings
from app.kit.db import migrate, new_session
from app.kit.ids import new_user_id
from app.kit.redis_client import sync_redis
from app.metering.keys import counter_key, outbox_bucket, outbox_key, repairs_key
from app.metering.outbox import encode
from app.metering.schemas import UsageEventIn
from app.metering.service import Reservation, send_commit
from app.models import Subscription, User
from app.plans import Plan
from app.runtime import reload_settings
from tests.support.fixtures import Backend, PerBackend, backend_of, cluster_settings
from tests.support.live_server import TEST_RUN_PREFIX, service_env
from tests.support.redis_cluster import store_for


class Accounts:
    """Makes account ids and forgets their Redis keys (all periods) at teardown."""

    def __init__(self) -> None:
        settings = get_settings()
        assert settings.redis_url, "point Settings at a Redis first"
        self.store = store_for(settings.redis_url, cluster=settings.redis_cluster)
        self.prefix = settings.redis_key_prefix
        self.user_ids: list[str] = []

    def new_id(self) -> str:
        user_id = new_user_id()
        self.user_ids.append(user_id)
        return user_id

    def create(self, session: Session, plan: Plan = Plan.FREE) -> str:
        """A user row (and an active subscription for the standard plan), committed."""
        user_id = self.new_id()
        session.add(User(id=user_id, email=f"{user_id}@example.com", password_hash="x"))
        if plan is Plan.STANDARD:
            session.flush()
            session.add(Subscription(user_id=user_id, plan="standard", status="active"))
        session.commit()
        return user_id

    def set_used(self, user_id: str, period: str, used: int) -> None:
        """As if `used` credits had been committed (the counter, not the ledger)."""
        self.store.hset(counter_key(user_id, period), "used", str(used))

    def used(self, user_id: str, period: str) -> int | None:
        raw = self.store.hget(counter_key(user_id, period), "used")
        return None if raw is None else int(str(raw))

    def pttl(self, key: str) -> int:
        return int(str(self.store.pttl(key)))

    def repairs(self, direction: str) -> int:
        return int(str(self.store.hget(repairs_key(), direction) or 0))

    def forget_counters(self, user_ids: list[str] | None = None) -> None:
        """What a flushed Redis looks like to these accounts."""
        for user_id in user_ids or self.user_ids:
            pattern = f"{self.prefix}usage:{{{user_id}}}:*"
            keys = list(self.store.scan_iter(match=pattern, count=1000))
            if keys:
                self.store.delete(*keys)

    def close(self) -> None:
        self.forget_counters()
        self.store.close()


@pytest.fixture(scope="session", autouse=True)
def _forget_metering_keys(redis_url: str) -> Iterator[None]:
    """Reconciliation recreates counters from the ledger: at the end, drop every metering
    key this test process made (they all carry its prefix, the backends' after it)."""
    yield
    store = redis.Redis.from_url(redis_url)
    for pattern in (f"{TEST_RUN_PREFIX}*usage:*", f"{TEST_RUN_PREFIX}*metering:*"):
        keys = list(store.scan_iter(match=pattern, count=1000))
        for start in range(0, len(keys), 500):
            store.delete(*keys[start : start + 500])
    store.close()


def _point_settings_at(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in env.items():
        if key.startswith("GEOSVC_"):
            monkeypatch.setenv(key, value)
    reload_settings()


@pytest.fixture(scope="session", params=["sqlite", "postgres", "cluster"])
def backend(
    request: pytest.FixtureRequest,
    redis_url: str,
    geodata_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Backend:
    """The metering tests also run on a Redis Cluster (`backend_of`)."""
    return backend_of(request, redis_url, geodata_dir, tmp_path_factory, per_backend)


@pytest.fixture(params=["redis", "cluster"])
def metering_redis(request: pytest.FixtureRequest, redis_url: str) -> tuple[str, dict[str, str]]:
    """The test Redis, or the session's Redis Cluster (Celery's broker in memory: these
    tests start no worker), and the settings that go with it."""
    if request.param == "redis":
        return redis_url, {}
    return request.getfixturevalue("redis_cluster_url"), cluster_settings("memory://")


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database at the migrations' head, migrated once and copied for each test
    that needs one (a migration costs a test about 0.4 s)."""
    template = tmp_path_factory.mktemp("migrated") / "geosvc.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GEOSVC_DATABASE_URL", f"sqlite:///{template}")
        reload_settings()
        migrate()
    reload_settings()
    return template


@pytest.fixture
def use_redis(
    metering_redis: tuple[str, dict[str, str]],
    migrated_sqlite: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[dict[str, str]]:
    """Settings on the test Redis or cluster (and a throwaway SQLite at the migrations'
    head: a free account's first reservation reads its ledger total); yields env."""
    redis_url, settings = metering_redis
    database = tmp_path / "geosvc.db"
    # SQLite's backup copies what the template's WAL holds too (a file copy would not)
    with sqlite3.connect(migrated_sqlite) as source, sqlite3.connect(database) as copy:
        source.backup(copy)
    env = service_env(
        database_url=f"sqlite:///{database}",
        redis_url=redis_url,
        data_dir=tmp_path,
        **settings,
    )
    _point_settings_at(env, monkeypatch)
    yield env
    for key in list(os.environ):
        if key.startswith("GEOSVC_"):
            monkeypatch.delenv(key, raising=False)
    reload_settings()


@pytest.fixture
def redis_accounts(use_redis: dict[str, str]) -> Iterator[Accounts]:
    accounts = Accounts()
    yield accounts
    accounts.close()


@pytest.fixture
def accounts(use_backend: Backend) -> Iterator[Accounts]:
    accounts = Accounts()
    yield accounts
    accounts.close()


@pytest.fixture
def session(use_backend: Backend) -> Iterator[Session]:
    with new_session() as db:
        yield db


@pytest.fixture
def small_quotas(use_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """Free 10, standard 20 credits in this process (not in worker processes)."""
    monkeypatch.setenv("GEOSVC_FREE_QUOTA", "10")
    monkeypatch.setenv("GEOSVC_STANDARD_QUOTA", "20")
    reload_settings()
    return 10, 20


def call_id() -> str:
    return "call_" + secrets.token_hex(12)


async def commit(reservation: Reservation) -> None:
    """A successful call's commit, as the tool-call service makes it."""
    committed = await send_commit(reservation, call_id=call_id(), key_id=None, tool="geocode")
    await committed()


def put_in_outbox(events: list[UsageEventIn]) -> None:
    """Usage events waiting in the outbox, as successful calls leave them (each in its
    account's bucket)."""
    for event in events:
        sync_redis().rpush(outbox_key(outbox_bucket(event.user_id)), encode(event))
