"""Worker liveness: the heartbeat comes from the consumer loop, so a worker that stops
consuming turns unhealthy (compose's healthcheck runs `geosvc worker-health`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.celery_worker import start_celery_worker
from tests.support.fixtures import Backend

pytestmark = pytest.mark.drill


def healthy(env: dict[str, str]) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "worker-health", "--max-age", "3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode == 0


def wait_until(check: object, deadline_s: float = 30.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.2)


def test_a_worker_that_stops_consuming_turns_unhealthy(backend: Backend, tmp_path: Path) -> None:
    if backend.name != "sqlite":
        pytest.skip("one backend is enough: nothing here touches the database")
    env = backend.env(
        GEOSVC_WORKER_HEARTBEAT_FILE=str(tmp_path / "alive"),
        GEOSVC_WORKER_STALL_S="0",  # no self-exit here: this test watches the health check
    )
    assert not healthy(env)  # no heartbeat before a worker consumes
    worker = start_celery_worker(env, tmp_path / "worker.log")
    try:
        wait_until(lambda: healthy(env))
        os.killpg(worker.process.pid, signal.SIGSTOP)  # frozen: its loop cannot beat
        try:
            wait_until(lambda: not healthy(env))
        finally:
            os.killpg(worker.process.pid, signal.SIGCONT)
        wait_until(lambda: healthy(env))
    finally:
        worker.stop()
