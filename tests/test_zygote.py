"""Test servers and workers forked from the zygotes (tests/support/zygote.py) behave as
the processes they stand for: they answer, exit with the status subprocess.Popen would
report, and are not forked where the environment sets what is read at import time."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.support.celery_worker import launch_celery_worker, wait_until_ready
from tests.support.fixtures import Backend
from tests.support.live_server import launch_live_server, wait_until_healthy
from tests.support.services import migrate
from tests.support.zygote import COMMANDS, SERVERS, ForkedProcess, run_command


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
        for zygote in (SERVERS, COMMANDS):
            assert zygote.forkable(env)
            assert not zygote.forkable({**env, "PYTHONHASHSEED": "7"})
            assert not zygote.forkable({**env, "PROMETHEUS_MULTIPROC_DIR": "/tmp/metrics"})


class TestForkedWorkers:
    def test_runs_tasks_and_stops_as_a_new_interpreter_does(
        self, env: dict[str, str], tmp_path: Path
    ) -> None:
        migrate(env)
        forked = launch_celery_worker(env, tmp_path / "forked.log", queues="billing")
        # PYTHONHASHSEED is read at start-up: a new interpreter (zygote.forkable)
        fresh_env = {**env, "PYTHONHASHSEED": "0"}
        fresh = launch_celery_worker(fresh_env, tmp_path / "fresh.log", queues="billing")
        assert isinstance(forked.process, ForkedProcess)
        assert isinstance(fresh.process, subprocess.Popen)
        try:
            for worker in (forked, fresh):
                wait_until_ready(worker)
                # the group leader of its pool, so that CeleryWorker.kill reaches them all
                assert os.getpgid(worker.process.pid) == worker.process.pid
                assert worker.client.control.inspect([worker.hostname], timeout=5).stats()
        finally:
            forked.stop()
            fresh.stop()
        assert forked.process.poll() == fresh.process.poll() == 0  # a warm shutdown
        assert "celery@" not in forked.log()  # its --hostname, not Celery's default
        assert forked.hostname.split("@")[0] in forked.log()

    def test_killed_with_its_pool(self, env: dict[str, str], tmp_path: Path) -> None:
        migrate(env)
        worker = wait_until_ready(
            launch_celery_worker(env, tmp_path / "worker.log", queues="billing", concurrency=2)
        )
        pool = [
            int(pid)
            for pid in Path(f"/proc/{worker.process.pid}/task/{worker.process.pid}/children")
            .read_text()
            .split()
        ]
        assert len(pool) == 2
        assert {os.getpgid(pid) for pid in pool} == {worker.process.pid}  # killpg reaches them
        worker.kill()
        assert worker.process.poll() == -signal.SIGKILL
        # SIGKILL takes effect as each is scheduled: poll until all are gone (or zombies
        # until init reaps them)
        deadline = time.monotonic() + 10
        while (running := [pid for pid in pool if _running(pid)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running == []


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class TestForkedCommands:
    def test_run_where_asked_reading_its_env_file(
        self, env: dict[str, str], tmp_path: Path
    ) -> None:
        """`geosvc` reads ./.env where it runs (check-config --as-set judges what is set)."""
        unset = {k: v for k, v in env.items() if not k.startswith("GEOSVC_")}
        production, development = tmp_path / "production", tmp_path / "development"
        production.mkdir()
        development.mkdir()
        (production / ".env").write_text("GEOSVC_ENV=production\n")
        refused = run_command(unset, ["check-config", "--as-set"], cwd=production)
        assert refused.returncode == 2, refused.output
        assert "GEOSVC_SECRET_PEPPER" in refused.output
        fine = run_command(unset, ["check-config", "--as-set"], cwd=development)
        assert fine.returncode == 0, fine.output


def test_a_failed_migration_says_why(env: dict[str, str]) -> None:
    unreachable = {**env, "GEOSVC_DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none"}
    with pytest.raises(RuntimeError, match="geosvc migrate exited 1") as failed:
        migrate(unreachable)
    assert "127.0.0.1" in str(failed.value)  # the command's own output
