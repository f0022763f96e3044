"""The HTTP data API end to end: a real uvicorn server and a real Celery worker process
(as for /mcp: `tests.mcp.conftest`), talked to with httpx and, to compare, the official
`mcp` client on the same server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine
from sqlmodel import Session, col, select

from app.models import UsageEvent
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Stack, mcp_stack
from tests.support.factories import sign_up
from tests.support.fixtures import Backend, PerBackend


@pytest.fixture(scope="session")
def v1_stack(
    backend: Backend,
    fake_upstream: FakeUpstream,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Stack:
    return mcp_stack("v1", backend, fake_upstream, tmp_path_factory, per_backend)


@dataclass
class Client:
    """A signed-up account: its key, the control plane (cookie) and the data API (key)."""

    user_id: str
    api_key: str
    key_id: str
    control: httpx.Client
    api: httpx.Client

    def usage(self) -> dict[str, Any]:
        return dict(self.control.get("/usage").json())


def new_client(base_url: str, clients: list[httpx.Client]) -> Client:
    control = httpx.Client(base_url=base_url, timeout=30)
    user_id = str(sign_up(control)["userId"])
    created = control.post("/api-keys", json={"name": "app"}).json()
    api = httpx.Client(
        base_url=base_url,
        timeout=30,
        headers={"Authorization": f"Bearer {created['plaintext']}"},
    )
    clients += [control, api]
    return Client(user_id, created["plaintext"], created["key"]["keyId"], control, api)


@pytest.fixture
def client(v1_stack: Stack) -> Iterator[Client]:
    clients: list[httpx.Client] = []
    yield new_client(v1_stack.server.url, clients)
    for http in clients:
        http.close()


@pytest.fixture
def other(v1_stack: Stack) -> Iterator[Client]:
    """A second account."""
    clients: list[httpx.Client] = []
    yield new_client(v1_stack.server.url, clients)
    for http in clients:
        http.close()


def ledger_rows(stack: Stack, user_id: str) -> list[tuple[str, int]]:
    """(tool, credits) of the account's ledger rows, sorted."""
    engine = create_engine(stack.database_url)
    try:
        with Session(engine) as session:
            rows = session.exec(
                select(UsageEvent.tool, UsageEvent.credits).where(
                    col(UsageEvent.user_id) == user_id
                )
            ).all()
            return sorted((str(tool), int(credits)) for tool, credits in rows)
    finally:
        engine.dispose()


def wait_for_rows(stack: Stack, user_id: str, count: int) -> list[tuple[str, int]]:
    """The ledger rows once `count` are there (the outbox drains in the background)."""
    deadline = time.monotonic() + 20
    while len(rows := ledger_rows(stack, user_id)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return rows


@cache
def openapi(base_url: str) -> dict[str, Any]:
    response = httpx.get(f"{base_url}/v1/openapi.json")
    assert response.status_code == 200
    return dict(response.json())


def assert_documented(response: httpx.Response) -> None:
    """The answer's status is documented for its operation in /v1/openapi.json."""
    request = response.request
    base = f"{request.url.scheme}://{request.url.netloc.decode()}"
    operation = openapi(base)["paths"][request.url.path][request.method.lower()]
    assert str(response.status_code) in operation["responses"], (request.url, response.text)
