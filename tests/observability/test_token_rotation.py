"""The metrics token rotates without a gap (issue 38, item 5): while
GEOSVC_METRICS_PREVIOUS_TOKEN is set, /metrics answers both tokens, so a Prometheus still
sending the old one keeps scraping until it is recreated with the new one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.fixtures import Backend
from tests.support.live_server import LiveServer, start_live_server

OLD, NEW = "metrics-token-before-rotation", "metrics-token-after-rotation"


@pytest.fixture
def rotating(backend: Backend, tmp_path: Path) -> Iterator[LiveServer]:
    env = backend.env(GEOSVC_METRICS_TOKEN=NEW, GEOSVC_METRICS_PREVIOUS_TOKEN=OLD)
    server = start_live_server(env, tmp_path / "api.log")
    yield server
    server.stop()


def scrape(server: LiveServer, token: str) -> int:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.get(f"{server.url}/metrics", headers=headers, timeout=10).status_code


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_both_tokens_are_accepted_while_rotating_and_no_other(rotating: LiveServer) -> None:
    assert scrape(rotating, NEW) == 200
    assert scrape(rotating, OLD) == 200
    assert scrape(rotating, "metrics-token-of-someone-else") == 401


def test_an_empty_previous_token_matches_nothing() -> None:
    """After the rotation the previous token is emptied: an empty bearer is no token."""
    from app.kit.config import Settings
    from app.observability.exposition import authorized

    settings = Settings(metrics_token=NEW, metrics_previous_token="")  # type: ignore[arg-type]
    assert not authorized(settings, "Bearer ")
    assert authorized(settings, f"Bearer {NEW}")
    assert not authorized(settings, f"Bearer {OLD}")


def test_the_metrics_token_is_read_as_every_credential_is() -> None:
    """Issue 51, item 1: the scheme in any case, spaces or tabs after it (kit/credentials.py)."""
    from app.kit.config import Settings
    from app.observability.exposition import authorized

    settings = Settings(metrics_token=NEW)  # type: ignore[arg-type]
    for spelling in ("BEARER {}", "bearer  {}", "Bearer\t{}", " Bearer {} "):
        assert authorized(settings, spelling.format(NEW)), spelling
    for spelling in ("Bearer\xa0{}", "Bearer{}", "Basic {}", "Bearer {}x"):
        assert not authorized(settings, spelling.format(NEW)), spelling
