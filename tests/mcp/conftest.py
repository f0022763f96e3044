"""The MCP surface end to end: a real uvicorn server and a real Celery worker process on
the real Redis (fakeredis's TCP server on a bare machine), talked to with the official
`mcp` client. Tools run on the embedded data except `get_average_income`, which goes to
the fake Census API, so provider outages and slow providers can be injected."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.extension import ClientExtension
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import create_engine, func
from sqlmodel import Session, col, select

from app.models import UsageEvent
from tests.fakes.upstream import FakeUpstream
from tests.support.celery_worker import CeleryWorker, launch_celery_worker, wait_until_ready
from tests.support.factories import sign_up
from tests.support.fixtures import Backend, PerBackend, started
from tests.support.live_server import (
    TEST_RUN_PREFIX,
    LiveServer,
    launch_live_server,
    wait_until_healthy,
)
from tests.support.services import migrate

FREE_QUOTA = 8
STANDARD_QUOTA = 4
DEADLINE_S = 4.0
# Between the tests' usual maps (about 15 KB as base64) and a 1280x1280 one (about 170 KB):
# over MCP the first come inline, the second as a link (issue 37, item 6).
MAP_INLINE_MAX_BYTES = 100_000


def mcp_env(backend: Backend, upstream: FakeUpstream, prefix: str) -> dict[str, str]:
    return backend.env(
        **upstream.env(),
        GEOSVC_REDIS_KEY_PREFIX=f"{TEST_RUN_PREFIX}{prefix}-{backend.name}:",
        GEOSVC_UPSTREAM_TOOLS='["get_average_income"]',
        GEOSVC_UPSTREAM_ATTEMPTS="2",
        GEOSVC_TOOL_DEADLINE_S=str(DEADLINE_S),
        GEOSVC_FREE_QUOTA=str(FREE_QUOTA),
        GEOSVC_STANDARD_QUOTA=str(STANDARD_QUOTA),
        GEOSVC_MAP_INLINE_MAX_BYTES=str(MAP_INLINE_MAX_BYTES),
    )


@dataclass
class Stack:
    """An api server and its worker, on their own key prefix."""

    server: LiveServer
    worker: CeleryWorker
    database_url: str

    @property
    def mcp_url(self) -> str:
        return f"{self.server.url}/mcp"

    def ledger_count(self, user_id: str) -> int:
        engine = create_engine(self.database_url)
        try:
            with Session(engine) as session:
                query = select(func.count()).where(col(UsageEvent.user_id) == user_id)
                return int(session.exec(query).one())
        finally:
            engine.dispose()


def start_stack(env: dict[str, str], logs: Path) -> Stack:
    """Migrate once, then start the server and the worker side by side. The worker gets
    the server's GEOSVC_BASE_URL: it writes the links in e-mails."""
    migrate(env)
    server = launch_live_server(env, logs / "server.log")
    worker = launch_celery_worker(server.env, logs / "worker.log")
    try:
        wait_until_ready(worker)
        wait_until_healthy(server, deadline_s=60)
    except Exception:
        worker.stop()
        server.stop()
        raise
    return Stack(server, worker, env["GEOSVC_DATABASE_URL"])


class Running(Protocol):
    """A stack: an api server and its worker (Stack, observability's ObservedStack)."""

    server: LiveServer
    worker: CeleryWorker


def stop_stack(running: Running) -> None:
    running.server.stop()
    running.worker.stop(wait=False)


def running_stack(env: dict[str, str], logs: Path) -> AbstractContextManager[Stack]:
    return started(lambda: start_stack(env, logs), stop_stack)


def mcp_stack(
    prefix: str,
    backend: Backend,
    fake_upstream: FakeUpstream,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Stack:
    """The session's stack on `backend` with mcp_env's settings under `prefix`."""
    name = f"{prefix}-{backend.name}"
    env = mcp_env(backend, fake_upstream, prefix)
    return per_backend.get(name, lambda: running_stack(env, tmp_path_factory.mktemp(name)))


@pytest.fixture(scope="session")
def stack(
    backend: Backend,
    fake_upstream: FakeUpstream,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Stack:
    return mcp_stack("mcp", backend, fake_upstream, tmp_path_factory, per_backend)


@dataclass
class Account:
    user_id: str
    api_key: str
    key_id: str
    http: httpx.Client  # signed in to the control plane


@pytest.fixture
def account(stack: Stack) -> Iterator[Account]:
    with httpx.Client(base_url=stack.server.url, timeout=30) as http:
        user_id = str(sign_up(http)["userId"])
        created = http.post("/api-keys", json={"name": "agent"}).json()
        yield Account(user_id, created["plaintext"], created["key"]["keyId"], http)


@pytest.fixture
def other_account(stack: Stack) -> Iterator[Account]:
    """A second account on the same stack."""
    with httpx.Client(base_url=stack.server.url, timeout=30) as http:
        user_id = str(sign_up(http)["userId"])
        created = http.post("/api-keys", json={"name": "other"}).json()
        yield Account(user_id, created["plaintext"], created["key"]["keyId"], http)


@asynccontextmanager
async def connect(
    url: str,
    api_key: str,
    mode: str = "auto",
    extensions: Sequence[ClientExtension] | None = None,
) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {api_key}"}, timeout=30)
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode=mode, extensions=extensions) as client:
        yield client


def structured(result: object) -> dict:
    """The structured content of a tool result, checked against its text, which carries
    the same object for hosts that show their model only the text: an error's text is its
    JSON; data's text is one summary line, then the JSON."""
    content = result.structured_content  # type: ignore[attr-defined]
    text = result.content[0].text  # type: ignore[attr-defined]
    if result.is_error:  # type: ignore[attr-defined]
        assert json.loads(text) == content
    else:
        summary, data = text.split("\n")
        assert not summary.startswith("{"), text
        assert json.loads(data) == content
    return dict(content)


def usage_meta(result: object) -> dict:
    """What a result's `_meta` says of the call's credits."""
    meta = result.meta  # type: ignore[attr-defined]
    assert meta is not None
    return dict(meta["geosvc/usage"])
