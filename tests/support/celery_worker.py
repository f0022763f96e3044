"""A real Celery worker process (`geosvc worker`) for tests, forked from the command
zygote (zygote.py) unless its environment sets what is read at import time."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis
from celery import Celery

from app.cli import ALL_QUEUES
from app.kit.config import Settings
from app.queue.celery import celery_config
from tests.support.services import migrate
from tests.support.zygote import ChildProcess, start_command


def client_for(env: dict[str, str]) -> Celery:
    """A Celery client on the broker and key prefix of `env` (independent of this process's
    Settings): for pinging workers and sending tasks to them."""
    settings = Settings(
        redis_url=env["GEOSVC_REDIS_URL"],
        redis_key_prefix=env["GEOSVC_REDIS_KEY_PREFIX"],
        redis_cluster=env.get("GEOSVC_REDIS_CLUSTER") == "true",
        broker_url=env.get("GEOSVC_BROKER_URL"),
    )
    app = Celery("geosvc-test-client", set_as_current=False)
    app.conf.update(celery_config(settings))
    return app


@dataclass
class CeleryWorker:
    hostname: str
    env: dict[str, str]
    process: ChildProcess
    log_path: Path
    client: Celery

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def ping(self, timeout: float = 1.0) -> bool:
        try:
            # limit=1: return with the one reply instead of waiting out the timeout
            replies = self.client.control.ping(
                destination=[self.hostname], timeout=timeout, limit=1
            )
        except redis.ConnectionError:
            # fakeredis's TCP server drops a connection after NOSCRIPT; the next try works
            return False
        return any(self.hostname in reply for reply in replies)

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes at once (no warm shutdown)."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def tasks_run(self, name: str) -> int:
        """How many `name` tasks this worker has started, from its own stats."""
        stats = self.client.control.inspect([self.hostname], timeout=2.0, limit=1).stats() or {}
        return int(stats.get(self.hostname, {}).get("total", {}).get(name, 0))

    def stop(self, *, wait: bool = True) -> None:
        """Warm shutdown (running tasks finish). wait=False, for fixtures at the end of
        their scope: the prefork pool takes ~2.5 s to wind down, which the next tests need
        not wait for; `reap_stopping_workers` waits for all of them at the end."""
        if self.process.poll() is None:
            self.process.terminate()
            if wait:
                _wait_or_kill(self.process)
            else:
                _stopping.append(self.process)
        self.client.close()


_stopping: list[ChildProcess] = []


def _wait_or_kill(process: ChildProcess) -> None:
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def reap_stopping_workers() -> None:
    while _stopping:
        _wait_or_kill(_stopping.pop())


def launch_celery_worker(
    env: dict[str, str],
    log_path: Path,
    *,
    queues: str = ALL_QUEUES,
    concurrency: int | None = None,
    pool: str | None = None,
) -> CeleryWorker:
    """Start a worker process on an already migrated database; `wait_until_ready` next."""
    hostname = f"test-{secrets.token_hex(4)}@localhost"
    argv = [
        "worker",
        "--queues",
        queues,
        *(["--concurrency", str(concurrency)] if concurrency is not None else []),
        *(["--pool", pool] if pool is not None else []),
        "--hostname",
        hostname,
        "--loglevel",
        "info",
    ]
    process = start_command({**env, "C_FORCE_ROOT": "1"}, argv, log_path)
    return CeleryWorker(hostname, env, process, log_path, client_for(env))


def wait_until_ready(worker: CeleryWorker, deadline_s: float = 60.0) -> CeleryWorker:
    """Ping until the worker answers; stop it and raise if it exits or never does."""
    deadline = time.monotonic() + deadline_s
    while True:
        if worker.process.poll() is not None:
            raise RuntimeError(f"worker exited early:\n{worker.log()}")
        if worker.ping(timeout=0.25):
            return worker
        if time.monotonic() > deadline:
            worker.stop()
            raise RuntimeError(f"worker did not answer a ping:\n{worker.log()}")


def start_celery_worker(
    env: dict[str, str],
    log_path: Path,
    *,
    queues: str = ALL_QUEUES,
    concurrency: int | None = None,
    pool: str | None = None,
    deadline_s: float = 60.0,
) -> CeleryWorker:
    """Migrate the database of `env`, start a worker and wait until it answers a ping.

    Without `pool`/`concurrency` the worker picks what production picks (for `tools`:
    GEOSVC_TOOLS_POOL, auto: prefork per CPU with every tool embedded, else threads)."""
    migrate(env)
    worker = launch_celery_worker(env, log_path, queues=queues, concurrency=concurrency, pool=pool)
    return wait_until_ready(worker, deadline_s)
