"""Bulk jobs end to end: a real uvicorn server and a real Celery worker process (queues
tools, jobs and billing) on the backend's database (SQLite and PostgreSQL) and Redis,
talked to over /v1 with httpx. Small chunks, so a job of tens of rows is several chunks."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, func
from sqlmodel import Session, col, select

from app.models import UsageEvent
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Stack, running_stack
from tests.support.fixtures import Backend, PerBackend
from tests.support.live_server import TEST_RUN_PREFIX
from tests.v1.conftest import Client, new_client

CHUNK_ROWS = 5
FREE_QUOTA = 40
# Free accounts' bulk pace: 20 rows/s, so a job of a few hundred rows runs for seconds.
FREE_JOB_ROWS_PER_S = 20


def jobs_env(backend: Backend, upstream: FakeUpstream, prefix: str, **extra: str) -> dict[str, str]:
    settings = {
        "GEOSVC_REDIS_KEY_PREFIX": f"{TEST_RUN_PREFIX}{prefix}-{backend.name}:",
        "GEOSVC_FREE_QUOTA": str(FREE_QUOTA),
        "GEOSVC_JOB_CHUNK_ROWS": str(CHUNK_ROWS),
        "GEOSVC_FREE_JOB_ROWS_PER_S": str(FREE_JOB_ROWS_PER_S),
        "GEOSVC_JOBS_PER_ACCOUNT": "2",
    }
    return backend.env(**upstream.env(), **{**settings, **extra})


@pytest.fixture(scope="session")
def jobs_stack(
    backend: Backend,
    fake_upstream: FakeUpstream,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Stack:
    name = f"jobs-{backend.name}"
    env = jobs_env(backend, fake_upstream, "jobs")
    return per_backend.get(name, lambda: running_stack(env, tmp_path_factory.mktemp(name)))


@pytest.fixture
def client(jobs_stack: Stack) -> Iterator[Client]:
    clients: list[httpx.Client] = []
    yield new_client(jobs_stack.server.url, clients)
    for http in clients:
        http.close()


@pytest.fixture
def other(jobs_stack: Stack) -> Iterator[Client]:
    clients: list[httpx.Client] = []
    yield new_client(jobs_stack.server.url, clients)
    for http in clients:
        http.close()


def wait_for(
    read: Callable[[], dict[str, Any]], done: Callable[[dict[str, Any]], bool], deadline_s: float
) -> dict[str, Any]:
    """Poll `read` until `done` says so; the last reading at the deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def finished(client: Client, job_id: str, deadline_s: float = 60) -> dict[str, Any]:
    job = wait_for(
        lambda: dict(client.api.get(f"/v1/jobs/{job_id}").json()),
        lambda job: job["status"] != "working",
        deadline_s,
    )
    assert job["status"] != "working", job
    return job


def ledger_count(database_url: str, user_id: str) -> int:
    engine = create_engine(database_url)
    try:
        with Session(engine) as session:
            query = select(func.count()).where(col(UsageEvent.user_id) == user_id)
            return int(session.exec(query).one())
    finally:
        engine.dispose()


def ledger_settles(database_url: str, user_id: str, count: int, deadline_s: float = 20) -> int:
    """The account's ledger rows once `count` are there (the outbox drains in the
    background), or what is there at the deadline."""
    deadline = time.monotonic() + deadline_s
    while (rows := ledger_count(database_url, user_id)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return rows
