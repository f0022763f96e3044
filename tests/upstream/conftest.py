from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.upstream import FakeUpstream


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
