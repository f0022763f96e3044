"""An api server and a worker (both real processes, production pool defaults) whose
`get_average_income`, `get_demographics`, `geocode` and `reverse_geocode` go to the fake
upstream providers."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Stack, running_stack
from tests.support.factories import sign_up
from tests.support.fixtures import Backend, PerBackend
from tests.support.live_server import TEST_RUN_PREFIX


@pytest.fixture(scope="session")
def upstream_stack(
    backend: Backend,
    fake_upstream: FakeUpstream,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Stack:
    env = backend.env(
        **fake_upstream.env(),
        GEOSVC_REDIS_KEY_PREFIX=f"{TEST_RUN_PREFIX}upstream-{backend.name}:",
        GEOSVC_UPSTREAM_TOOLS=(
            '["get_average_income", "get_demographics", "geocode", "reverse_geocode"]'
        ),
        GEOSVC_UPSTREAM_ATTEMPTS="1",
        GEOSVC_TOOL_DEADLINE_S="8",
        GEOSVC_FREE_QUOTA="1000",
    )
    return per_backend.get(
        f"upstream-{backend.name}",
        lambda: running_stack(env, tmp_path_factory.mktemp(f"upstream-{backend.name}")),
    )


@dataclass
class Caller:
    api_key: str
    http: httpx.Client  # signed in to the control plane

    def used(self) -> int:
        return int(self.http.get("/usage").json()["used"])


@pytest.fixture
def caller(upstream_stack: Stack) -> Iterator[Caller]:
    with httpx.Client(base_url=upstream_stack.server.url, timeout=30) as http:
        sign_up(http)
        created = http.post("/api-keys", json={"name": f"agent-{secrets.token_hex(3)}"})
        yield Caller(created.json()["plaintext"], http)
