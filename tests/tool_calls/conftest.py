"""The metered call in this process: the real tool-call and metering services on the
test Redis (fakeredis's server in the fast tier) and SQLite, `get_average_income`
answered by the fake Census (a real HTTP server on 127.0.0.1), and the Celery task run by
an in-process worker (tests/support/inline_worker.py). No process is started.

Every test runs twice: on the test Redis, and on the session's Redis Cluster (slow tier:
`redis_cluster_url`, started once per test process and shared with tests/metering), with
the test Redis as Celery's broker (a cluster cannot be one) and the outbox in buckets."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
import redis

from app.geodata import service as geodata
from app.kit.clock import period_of, utcnow
from app.kit.config import get_settings
from app.kit.db import migrate, new_session
from app.kit.ids import new_user_id
from app.kit.principal import CallerPrincipal
from app.metering.keys import (
    counter_key,
    key_bucket_key,
    outbox_bucket,
    outbox_key,
    reservations_key,
)
from app.metering.schemas import UsageEventIn
from app.models import User
from app.queue import close_waiter
from app.queue.celery import FREE_TOOLS_QUEUE
from app.runtime import reload_settings
from tests.fakes.upstream import FakeUpstream
from tests.support.fixtures import cluster_settings
from tests.support.inline_worker import InlineToolWorker
from tests.support.live_server import TEST_RUN_PREFIX, service_env
from tests.support.redis_cluster import store_for

TOOL = "get_average_income"
FREE_QUOTA = 5
FREE_CONCURRENCY = 2


@pytest.fixture(scope="package", params=["redis", "cluster"])
def calls_redis(request: pytest.FixtureRequest, redis_url: str) -> dict[str, str]:
    """The settings of the test Redis, or of the session's Redis Cluster."""
    if request.param == "redis":
        return {"GEOSVC_REDIS_URL": redis_url}
    cluster_url = request.getfixturevalue("redis_cluster_url")
    return {"GEOSVC_REDIS_URL": cluster_url, **cluster_settings(redis_url)}


@pytest.fixture(scope="package")
def calls_env(
    calls_redis: dict[str, str],
    fake_upstream: FakeUpstream,
    geodata_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Path]:
    """Settings for this folder's tests (one migrated SQLite database): free accounts get
    FREE_QUOTA credits and FREE_CONCURRENCY calls at once; `get_average_income` goes
    upstream (the fake), so no geodata index is loaded. Yields the indices' folder, for
    `service.configure` (the upstream provider is built from Settings once)."""
    folder = tmp_path_factory.mktemp("tool-calls")
    env = service_env(
        database_url=f"sqlite:///{folder / 'geosvc.db'}",
        redis_url=calls_redis["GEOSVC_REDIS_URL"],
        data_dir=folder,
        **calls_redis,
        **fake_upstream.env(),
        GEOSVC_UPSTREAM_TOOLS=f'["{TOOL}"]',
        GEOSVC_UPSTREAM_ATTEMPTS="1",
        GEOSVC_FREE_QUOTA=str(FREE_QUOTA),
        GEOSVC_FREE_CONCURRENCY=str(FREE_CONCURRENCY),
        # A key's burst is never spent by these calls, and once spent takes 100 s back.
        GEOSVC_FREE_RATE_PER_S="0.01",
    )
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            if key.startswith("GEOSVC_"):
                patch.setenv(key, value)
        reload_settings()
        migrate()
        yield geodata_dir
    reload_settings()
    geodata.configure(geodata_dir)  # as the session had it


@dataclass
class Meter:
    """One free account and its key, on keys of this test alone; reads of its credits."""

    principal: CallerPrincipal
    worker: InlineToolWorker  # the `tools.free` queue's
    store: redis.Redis
    period: str

    def used(self) -> int | None:
        raw = self.store.hget(counter_key(self.principal.user_id, self.period), "used")
        return None if raw is None else int(str(raw))

    def set_used(self, used: int) -> None:
        """As if `used` credits had been committed this month."""
        self.store.hset(counter_key(self.principal.user_id, self.period), "used", str(used))

    def in_flight(self) -> int:
        """Live reservations (calls admitted, not yet committed or released)."""
        return int(str(self.store.zcard(reservations_key(self.principal.user_id, self.period))))

    def outbox(self) -> list[UsageEventIn]:
        """Usage events of successful calls on their way to the ledger."""
        raw = self.store.lrange(outbox_key(outbox_bucket(self.principal.user_id)), 0, -1)
        events = [UsageEventIn.model_validate(json.loads(str(item))) for item in raw]  # type: ignore[union-attr]
        return [e for e in events if e.user_id == self.principal.user_id]

    def spend_key_burst(self) -> None:
        """The key's rate bucket empty, as right after a burst (refilled 1 token in 100 s)."""
        seconds, micros = self.store.time()  # type: ignore[misc]
        bucket = key_bucket_key(self.principal.user_id, self.principal.key_id)
        self.store.hset(bucket, mapping={"t": 0, "ts": int(seconds) * 1000 + int(micros) // 1000})

    def forget_keys(self) -> None:
        prefix = get_settings().redis_key_prefix
        keys = list(self.store.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            self.store.delete(*keys)


@pytest_asyncio.fixture(loop_scope="function")
async def meter(
    calls_env: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Meter]:
    # Keys of this test alone, the upstream answer cache's too: every call starts cold.
    prefix = f"{TEST_RUN_PREFIX}calls-{secrets.token_hex(4)}:"
    monkeypatch.setenv("GEOSVC_REDIS_KEY_PREFIX", prefix)
    reload_settings()
    geodata.configure(calls_env)  # the upstream provider anew, on these keys
    user_id = new_user_id()
    with new_session() as session:
        session.add(
            User(
                id=user_id,
                email=f"{user_id}@example.com",
                password_hash="x",
                email_verified_at=utcnow(),
            )
        )
        session.commit()
    principal = CallerPrincipal(
        key_id="key_" + secrets.token_hex(6), user_id=user_id, scopes=frozenset(), surface="v1"
    )
    settings = get_settings()
    store = store_for(str(settings.redis_url), cluster=settings.redis_cluster)
    made = Meter(principal, InlineToolWorker(FREE_TOOLS_QUEUE), store, period_of(utcnow()))
    yield made
    await close_waiter()
    await made.worker.close()
    made.forget_keys()
    store.close()
