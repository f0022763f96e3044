"""Fixtures used across test folders: backing services, the `backend` selection (SQLite
and PostgreSQL), geodata indices, live uvicorn servers and Celery workers.

`backend` is parametrised over SQLite and PostgreSQL; PostgreSQL runs when reachable and is
required under REQUIRE_SERVICES=1. Every test makes its own users, so tests share servers.

What a session fixture over `backend` starts is kept in `per_backend` until the session
ends. pytest tears a parametrised session fixture down whenever the next test wants the
other parameter, and under pytest-xdist's `--dist loadfile` a process runs each file's
SQLite tests and then its PostgreSQL ones: without it, every file would start each server,
worker and database it uses twice.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from typer.testing import CliRunner

from app.cli import cli
from tests.fakes.smtp import FakeSmtp
from tests.fakes.upstream import FakeUpstream
from tests.support.celery_worker import CeleryWorker, reap_stopping_workers, start_celery_worker
from tests.support.live_server import TEST_RUN_PREFIX, LiveServer, service_env, start_live_server
from tests.support.redis_cluster import ClusterStartFailed, local_cluster
from tests.support.services import (
    FAKE_REDIS,
    REQUIRE_SERVICES,
    ServiceUnavailable,
    forget_keys,
    fresh_postgres_database,
    redis_url_for_tests,
)


@dataclass
class Backend:
    name: str
    database_url: str
    redis_url: str
    # GEOSVC_DATA_DIR: the geodata indices, built once per session and shared.
    data_dir: Path
    # More settings of this backend's processes (the Redis Cluster backend's).
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def key_prefix(self) -> str:
        """Redis keys of this backend's servers and workers: both backends' stacks run at
        once (per_backend), and a worker must not take the other database's tasks."""
        return f"{TEST_RUN_PREFIX}{self.name}:"

    def env(self, **extra: str) -> dict[str, str]:
        return service_env(
            database_url=self.database_url,
            redis_url=self.redis_url,
            data_dir=self.data_dir,
            **{"GEOSVC_REDIS_KEY_PREFIX": self.key_prefix, **self.settings, **extra},
        )


T = TypeVar("T")


class PerBackend:
    """What session fixtures over `backend` made, by name, kept until the session ends
    (see the module's docstring); a failure to make one is kept too."""

    def __init__(self) -> None:
        self._made: dict[str, Any] = {}
        self._failed: dict[str, BaseException] = {}
        self._exits = ExitStack()

    def get(self, name: str, make: Callable[[], AbstractContextManager[T]]) -> T:
        """`make()` entered the first time `name` is asked for; exited at the end."""
        if name in self._failed:
            raise self._failed[name]
        if name not in self._made:
            try:
                self._made[name] = self._exits.enter_context(make())
            except BaseException as exc:
                self._failed[name] = exc
                raise
        return self._made[name]  # type: ignore[no-any-return]

    def close(self) -> None:
        self._exits.close()


@pytest.fixture(scope="session")
def per_backend() -> Iterator[PerBackend]:
    kept = PerBackend()
    yield kept
    kept.close()


@pytest.fixture(scope="session", autouse=True)
def _leave_nothing_behind() -> Iterator[None]:
    """Set up first, torn down last: waits for the workers fixtures stopped without
    waiting, then deletes this process's keys from the shared Redis."""
    yield
    reap_stopping_workers()
    forget_keys(TEST_RUN_PREFIX)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_url_for_tests() as (url, _is_real):
        yield url


@pytest.fixture(scope="session")
def geodata_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Indices built once by the real `geosvc data build`; this process reads them too.
    Under pytest-xdist the workers share one build (the first builds, the others wait).

    GEOSVC_TEST_DATA_DIR (a data dir holding a current build, e.g. `.geosvc`: `make test`
    sets it) skips the minutes-long build: its indices are copied."""
    from app.geodata import service
    from app.geodata.indices.store import index_dir, is_current

    run_dir = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_dir = run_dir.parent  # the run's directory, above each worker's own
    data_dir = run_dir / "geodata"
    prebuilt = os.environ.get("GEOSVC_TEST_DATA_DIR")
    with (run_dir / "geodata.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
        if prebuilt and is_current(index_dir(Path(prebuilt))):
            if not is_current(index_dir(data_dir)):
                shutil.copytree(index_dir(Path(prebuilt)), index_dir(data_dir))
        else:
            result = CliRunner().invoke(cli, ["data", "build", "--data-dir", str(data_dir)])
            assert result.exit_code == 0, result.output  # up to date: it says so, builds nothing
    service.configure(data_dir)
    yield data_dir
    service.configure(None)


@pytest.fixture(scope="session")
def fake_upstream() -> Iterator[FakeUpstream]:
    server = FakeUpstream().start()
    yield server
    server.stop()


@pytest.fixture
def upstream(fake_upstream: FakeUpstream) -> Iterator[FakeUpstream]:
    fake_upstream.clear()
    yield fake_upstream
    fake_upstream.clear()


@pytest.fixture(scope="session")
def fake_smtp() -> Iterator[FakeSmtp]:
    """A real SMTP server on 127.0.0.1 that keeps what it receives (tests/fakes/smtp.py).
    Shared: each test mails its own fresh addresses."""
    server = FakeSmtp().start()
    yield server
    server.stop()


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def backend(
    request: pytest.FixtureRequest,
    redis_url: str,
    geodata_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Backend:
    return backend_of(request, redis_url, geodata_dir, tmp_path_factory, per_backend)


# A test of limits or caps over a stack, run on the session's Redis Cluster as well (SQLite,
# the cluster, the test Redis as Celery's broker; `backend_of`). Its stacks are extra ones,
# so marked tests are few: each kind of limit once, where one Redis runs it too.
ON_A_REDIS_CLUSTER_TOO = pytest.mark.parametrize(
    "backend", ["sqlite", "postgres", "cluster"], indirect=True
)


def backend_of(
    request: pytest.FixtureRequest,
    redis_url: str,
    geodata_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Backend:
    """The backend `request.param` names. "cluster" (where a folder asks for it, the
    metering tests, or a test, ON_A_REDIS_CLUSTER_TOO) is SQLite on the session's Redis
    Cluster, with the test Redis as Celery's broker (the cluster cannot be one), and the
    outbox in four buckets."""
    if request.param == "sqlite":
        return per_backend.get(
            "backend-sqlite", lambda: _sqlite(redis_url, geodata_dir, tmp_path_factory)
        )
    if request.param == "cluster":
        cluster_url = request.getfixturevalue("redis_cluster_url")
        return per_backend.get(
            "backend-cluster",
            lambda: _cluster(cluster_url, redis_url, geodata_dir, tmp_path_factory),
        )
    try:
        return per_backend.get("backend-postgres", lambda: _postgres(redis_url, geodata_dir))
    except ServiceUnavailable as exc:
        if REQUIRE_SERVICES:
            raise
        pytest.skip(str(exc))


@contextmanager
def _sqlite(
    redis_url: str, geodata_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    database = tmp_path_factory.mktemp("sqlite") / "geosvc.db"
    yield Backend("sqlite", f"sqlite:///{database}", redis_url, geodata_dir)


@contextmanager
def _cluster(
    cluster_url: str, broker_url: str, geodata_dir: Path, factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    database = factory.mktemp("sqlite-cluster") / "geosvc.db"
    settings = cluster_settings(broker_url)
    yield Backend("cluster", f"sqlite:///{database}", cluster_url, geodata_dir, settings)


def cluster_settings(broker_url: str) -> dict[str, str]:
    return {
        "GEOSVC_REDIS_CLUSTER": "true",
        "GEOSVC_BROKER_URL": broker_url,
        "GEOSVC_OUTBOX_BUCKETS": "4",
    }


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    """A Redis Cluster of three masters for this test process (tests/support/
    redis_cluster.py): skipped in the fast tier and, without REQUIRE_SERVICES=1, where
    it cannot start; under REQUIRE_SERVICES=1 a cluster that fails to start fails."""
    if FAKE_REDIS:
        pytest.skip("the fast tier starts no Redis Cluster")
    try:
        with local_cluster() as cluster:
            yield cluster.url
    except ClusterStartFailed as exc:
        if REQUIRE_SERVICES:
            raise
        pytest.skip(str(exc))


@contextmanager
def _postgres(redis_url: str, geodata_dir: Path) -> Iterator[Backend]:
    with fresh_postgres_database() as url:
        yield Backend("postgres", url, redis_url, geodata_dir)


@contextmanager
def started(start: Callable[[], T], stop: Callable[[T], object]) -> Iterator[T]:
    """`start()`'s result, given to `stop` at the end: for PerBackend.get."""
    thing = start()
    try:
        yield thing
    finally:
        stop(thing)


def running_server(env: dict[str, str], log_path: Path) -> AbstractContextManager[LiveServer]:
    return started(lambda: start_live_server(env, log_path), LiveServer.stop)


def running_worker(env: dict[str, str], log_path: Path) -> AbstractContextManager[CeleryWorker]:
    return started(lambda: start_celery_worker(env, log_path), lambda w: w.stop(wait=False))


# The stacks over `backend` are function-scoped fixtures in front of PerBackend's cache:
# tests/metering has a `backend` of its own (the same backends, and a cluster), and a
# session-scoped fixture made under one `backend` definition is not made again when the
# other one's parameter changes (pytest finalizes it only with the definition it used),
# so a test on PostgreSQL could be handed the SQLite server a file before had made.


@pytest.fixture
def live_server(
    backend: Backend, tmp_path_factory: pytest.TempPathFactory, per_backend: PerBackend
) -> LiveServer:
    return per_backend.get(
        f"server-{backend.name}",
        lambda: running_server(
            backend.env(), tmp_path_factory.mktemp("logs") / f"server-{backend.name}.log"
        ),
    )


@pytest.fixture
def celery_worker(
    backend: Backend, tmp_path_factory: pytest.TempPathFactory, per_backend: PerBackend
) -> CeleryWorker:
    """A real `geosvc worker` process (queues tools and billing) on the backend's database,
    Redis and key prefix: what the live server enqueues to. `celery_worker.client` sends
    tasks to it."""
    return per_backend.get(
        f"worker-{backend.name}",
        lambda: running_worker(
            backend.env(), tmp_path_factory.mktemp("logs") / f"worker-{backend.name}.log"
        ),
    )


@pytest.fixture
def http(live_server: LiveServer) -> Iterator[httpx.Client]:
    """A fresh cookie jar against the live server."""
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        yield client


@pytest.fixture
def use_backend(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    """Point this process's Settings (DB, Redis) at the backend, for service-level tests."""
    from app.kit.db import migrate
    from app.runtime import reload_settings

    for key, value in backend.env().items():
        if key.startswith("GEOSVC_"):
            monkeypatch.setenv(key, value)
    reload_settings()
    migrate()
    yield backend
    for key in list(os.environ):
        if key.startswith("GEOSVC_"):
            monkeypatch.delenv(key, raising=False)
    reload_settings()
