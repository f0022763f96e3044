"""A stack as deployed: `geosvc api --workers 2` (two uvicorn processes, multiprocess
metrics) and `geosvc worker` with its metrics exporter, both behind a metrics token, on
the backend's database, the real Redis and the fake upstream (get_average_income goes to
the fake Census API)."""

from __future__ import annotations

import subprocess
import sys
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.kit.embedded_redis import free_port
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import mcp_env, stop_stack
from tests.support.celery_worker import CeleryWorker, launch_celery_worker, wait_until_ready
from tests.support.fixtures import Backend, PerBackend, started
from tests.support.live_server import LiveServer, wait_until_healthy
from tests.support.services import migrate

METRICS_TOKEN = "metrics-token-for-tests"
AUTH = {"Authorization": f"Bearer {METRICS_TOKEN}"}
# Short request deadlines, so the tests of app/http/server.py wait seconds, not tens.
HEADER_TIMEOUT_S = 3
BODY_TIMEOUT_S = 4


def launch_api(env: dict[str, str], log_path: Path, *, workers: int = 2) -> LiveServer:
    """`geosvc api` as the container runs it (it migrates, then serves)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**env, "GEOSVC_BASE_URL": url}
    log = log_path.open("wb")
    command = [sys.executable, "-m", "app.cli", "api", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--workers", str(workers)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    return LiveServer(url=url, env=env, process=process, log_path=log_path)


@dataclass
class ObservedStack:
    server: LiveServer
    worker: CeleryWorker
    worker_metrics_url: str
    database_url: str

    @property
    def mcp_url(self) -> str:
        return f"{self.server.url}/mcp"

    def api_metrics(self) -> Samples:
        response = httpx.get(f"{self.server.url}/metrics", headers=AUTH, timeout=10)
        assert response.status_code == 200, response.text
        return Samples.parse(response.text)

    def worker_metrics(self) -> Samples:
        response = httpx.get(self.worker_metrics_url, headers=AUTH, timeout=10)
        assert response.status_code == 200, response.text
        return Samples.parse(response.text)


class Samples:
    """Sample values by (name, sorted labels)."""

    def __init__(self, values: dict[tuple[str, tuple[tuple[str, str], ...]], float]) -> None:
        self.values = values

    @classmethod
    def parse(cls, text: str) -> Samples:
        values = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        return cls(values)

    def get(self, name: str, **labels: str) -> float:
        return self.values.get((name, tuple(sorted(labels.items()))), 0.0)

    def has(self, name: str, **labels: str) -> bool:
        return (name, tuple(sorted(labels.items()))) in self.values


TILE_FETCHES_PER_IP = 5


def observed_env(backend: Backend, upstream: FakeUpstream, prefix: str) -> dict[str, str]:
    return {
        **mcp_env(backend, upstream, prefix),
        "GEOSVC_METRICS_TOKEN": METRICS_TOKEN,
        "GEOSVC_WORKER_METRICS_HOST": "127.0.0.1",
        "GEOSVC_WORKER_METRICS_PORT": str(free_port()),
        "GEOSVC_LOG_FORMAT": "json",
        "GEOSVC_HTTP_HEADER_TIMEOUT_S": str(HEADER_TIMEOUT_S),
        "GEOSVC_HTTP_BODY_TIMEOUT_S": str(BODY_TIMEOUT_S),
        # small enough for a test to reach (tests/observability/test_tile_metrics.py)
        "GEOSVC_TILE_FETCHES_PER_IP": str(TILE_FETCHES_PER_IP),
    }


def start_observed_stack(env: dict[str, str], logs: Path) -> ObservedStack:
    """Migrate once (`geosvc api` would too), then start worker and api side by side."""
    migrate(env)
    worker = launch_celery_worker(env, logs / "worker.log")
    server = launch_api(env, logs / "api.log")
    try:
        wait_until_ready(worker)
        # two api processes on a loaded 2-core machine: 45 s seen
        wait_until_healthy(server, deadline_s=180)
    except Exception:
        worker.stop()
        server.stop()
        raise
    port = env["GEOSVC_WORKER_METRICS_PORT"]
    return ObservedStack(
        server, worker, f"http://127.0.0.1:{port}/metrics", env["GEOSVC_DATABASE_URL"]
    )


@pytest.fixture(scope="session")
def observed(
    backend: Backend,
    fake_upstream: FakeUpstream,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> ObservedStack:
    env = observed_env(backend, fake_upstream, "obs")
    return per_backend.get(
        f"obs-{backend.name}",
        lambda: running_observed_stack(env, tmp_path_factory.mktemp(f"obs-{backend.name}")),
    )


def running_observed_stack(
    env: dict[str, str], logs: Path
) -> AbstractContextManager[ObservedStack]:
    return started(lambda: start_observed_stack(env, logs), stop_stack)


def poll(check: object, deadline_s: float = 20.0) -> None:
    """Wait until `check()` is truthy (no sleeps as synchronisation: a deadline)."""
    deadline = time.monotonic() + deadline_s
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {deadline_s} s")
        time.sleep(0.05)
