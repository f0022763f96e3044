"""Test servers forked from the zygote (tests/support/zygote.py) behave as the processes
they stand for: they answer, exit with the status subprocess.Popen would report, and
are not forked where the environment sets what is read at import time."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.support.fixtures import Backend
from tests.support.live_server import launch_live_server, wait_until_healthy
from tests.support.services import migrate
from tests.support.zygote import ZYGOTE, ForkedProcess


@pytest.fixture
def env(backend: Backend) -> dict[str, str]:
    return backend.env()


class TestForkedServers:
    def test_answers_with_its_own_environment(self, env: dict[str, str], tmp_path: Path) -> None:
        migrate(env)
        launched = launch_live_server(env, tmp_path / "server.log", base_url="http://forked.test")
        server = wait_until_healthy(launched, 60)
        try:
            assert isinstance(server.process, ForkedProcess)
            meta = httpx.get(f"{server.url}/.well-known/oauth-protected-resource", timeout=10)
            assert meta.json()["resource"].startswith("http://forked.test")
            assert server.process.poll() is None
            with pytest.raises(subprocess.TimeoutExpired):
                server.process.wait(timeout=0.2)
        finally:
            server.stop()
        # uvicorn shuts down on SIGTERM, then raises the signal again, as in a new process
        assert server.process.poll() == -signal.SIGTERM
        assert "Application startup complete" in server.log()

    def test_killed_reports_the_signal(self, env: dict[str, str], tmp_path: Path) -> None:
        migrate(env)
        server = wait_until_healthy(launch_live_server(env, tmp_path / "server.log"), 60)
        server.process.kill()
        assert server.process.wait(timeout=15) == -signal.SIGKILL

    def test_a_failed_start_exits_as_a_new_interpreter_does(
        self, env: dict[str, str], tmp_path: Path
    ) -> None:
        migrate(env)
        first = wait_until_healthy(launch_live_server(env, tmp_path / "first.log"), 60)
        try:
            port = int(first.url.rsplit(":", 1)[1])  # taken: both fail to start
            forked = launch_live_server(env, tmp_path / "forked.log", port=port)
            # PYTHONHASHSEED is read at start-up: a new interpreter (zygote.forkable)
            fresh_env = {**env, "PYTHONHASHSEED": "0"}
            fresh = launch_live_server(fresh_env, tmp_path / "fresh.log", port=port)
            assert isinstance(forked.process, ForkedProcess)
            assert isinstance(fresh.process, subprocess.Popen)
            assert forked.process.wait(timeout=60) == fresh.process.wait(timeout=60) != 0
            assert "address already in use" in forked.log()
        finally:
            first.stop()

    def test_import_time_settings_get_a_new_interpreter(self, env: dict[str, str]) -> None:
        assert ZYGOTE.forkable(env)
        assert not ZYGOTE.forkable({**env, "PYTHONHASHSEED": "7"})
        assert not ZYGOTE.forkable({**env, "PROMETHEUS_MULTIPROC_DIR": "/tmp/metrics"})
