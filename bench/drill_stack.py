"""The production shape for fault drills, started from scratch on free ports.

A private `redis-server` (with or without AOF) and a private PostgreSQL (`initdb` into a
temp dir, binaries from `pg_config --bindir`), then `geosvc api`, two `geosvc worker`
(prefork, concurrency 2) and `geosvc beat`. A supervisor thread restarts any of those
processes that exits, like compose's `restart: unless-stopped`: that restart is the
platform's, not a hand restart. Nothing here touches the machine's shared services.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.kit.embedded_redis import free_port  # noqa: E402
from app.queue.liveness import children_of  # noqa: E402

# Rate and concurrency limits out of reach: for drills that measure faults, not tenancy.
UNLIMITED_TENANTS = {
    f"GEOSVC_{plan}_{limit}": "1000000"
    for plan in ("FREE", "STANDARD")
    for limit in ("RATE_PER_S", "BURST", "CONCURRENCY")
}


def wait_for(check: object, what: str, deadline_s: float = 60.0, every: float = 0.1) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            if check():  # type: ignore[operator]
                return
        except Exception:
            pass
        time.sleep(every)
    raise RuntimeError(f"{what}: not ready after {deadline_s:g} s")


class RedisServer:
    """A private redis-server; `aof` is None (no persistence), "everysec" or "always"."""

    def __init__(self, workdir: Path, aof: str | None) -> None:
        self.dir = workdir / "redis"
        self.dir.mkdir()
        self.port = free_port()
        self.aof = aof
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--dir", str(self.dir), "--save", "", "--protected-mode", "no"]
        if self.aof:
            argv += ["--appendonly", "yes", "--appendfsync", self.aof]
        else:
            argv += ["--appendonly", "no"]
        log = (self.dir / "redis.log").open("ab")
        self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        # `loading` answers BUSY/LOADING while the AOF is replayed; ping only works after.
        wait_for(client.ping, "redis-server", 30)

    def kill9(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True, socket_timeout=5)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


class Postgres:
    """A private PostgreSQL cluster in a temp dir, run as the `postgres` user when root."""

    def __init__(
        self, workdir: Path, name: str = "pg", *, initdb: bool = True, options: str = ""
    ) -> None:
        """`initdb=False`: the data directory comes from elsewhere (a base backup);
        `options`: more `-c name=value` server settings for `start`."""
        bindir = subprocess.run(
            ["pg_config", "--bindir"], check=True, capture_output=True, text=True
        ).stdout.strip()
        self.bin = Path(bindir)
        self.dir = workdir / name
        self.dir.mkdir()
        self.data = self.dir / "data"
        self.port = free_port()
        self.options = options
        self._as_user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses root
            shutil.chown(self.dir, "postgres")
            self._as_user = ["runuser", "-u", "postgres", "--"]
        if initdb:
            self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                      "--no-sync")  # fmt: skip

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/geosvc"

    @property
    def pid(self) -> int:
        """The postmaster's pid (first line of postmaster.pid)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run(
            [*self._as_user, str(self.bin / tool), *args], check=True, capture_output=True
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        options += f" {self.options}" if self.options else ""
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"),
                  "-w", "start")  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def create_database(self) -> None:
        admin = self.url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CREATE DATABASE geosvc")

    def query(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        with psycopg.connect(self.url, autocommit=True, connect_timeout=3) as conn:
            return conn.execute(sql, params).fetchall()  # type: ignore[arg-type]


@dataclass
class Service:
    """One supervised geosvc process, in its own process group."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    stopped: bool = False

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            self.argv, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def children(self) -> list[int]:
        return children_of(self.pid)

    def stop(self) -> None:
        self.ask_to_stop()
        self.wait_stopped()

    def ask_to_stop(self) -> None:
        """SIGTERM to its process group, no wait (the supervisor restarts it no more)."""
        self.stopped = True
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)

    def wait_stopped(self) -> None:
        """Up to 20 s for a clean stop, then SIGKILL to the group."""
        if self.process is None:
            return
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


class Supervisor:
    """Restarts exited services (compose `restart: unless-stopped`), every 0.5 s."""

    def __init__(self) -> None:
        self.services: dict[str, Service] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def add(self, service: Service) -> Service:
        self.services[service.name] = service
        service.start()
        return service

    def run(self) -> None:
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.5):
            for service in list(self.services.values()):
                if service.stopped or service.process is None:
                    continue
                if service.process.poll() is not None:
                    service.restarts += 1
                    service.start()

    def restarts(self) -> int:
        return sum(service.restarts for service in self.services.values())

    def stop(self) -> None:
        """Every service at once: a warm shutdown takes seconds (a prefork pool's), and
        one after the other they would add up."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()  # no restart after this point
        for service in self.services.values():
            service.ask_to_stop()
        for service in self.services.values():
            service.wait_stopped()


@dataclass
class Stack:
    workdir: Path
    redis: RedisServer
    postgres: Any  # a Postgres, or any with its url, query, start, stop (pg_replica)
    env: dict[str, str]
    base_url: str
    supervisor: Supervisor
    workers: list[Service] = field(default_factory=list)

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    def geosvc(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "app.cli", *args]


@contextlib.contextmanager
def rabbitmq_vhost() -> Iterator[str]:
    """A throwaway vhost on the machine's RabbitMQ (drills never share its queues)."""
    vhost = f"geosvc-drill-{secrets.token_hex(4)}"
    subprocess.run(["rabbitmqctl", "add_vhost", vhost], check=True, capture_output=True)
    subprocess.run(
        ["rabbitmqctl", "set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"amqp://guest:guest@127.0.0.1:5672/{vhost}"
    finally:
        subprocess.run(["rabbitmqctl", "delete_vhost", vhost], capture_output=True)


def build_geodata(data_dir: Path) -> None:
    """`geosvc data build` unless the indices are current (the check it makes first, here
    without an interpreter's start). A worker never builds them itself: it refuses to
    start without them (app.geodata.readiness)."""
    from app.geodata.indices.store import index_dir, is_current

    if is_current(index_dir(data_dir)):
        return
    subprocess.run(
        [sys.executable, "-m", "app.cli", "data", "build", "--data-dir", str(data_dir)],
        check=True,
        capture_output=True,
    )


def geodata_dir() -> Path:
    """The indices a bench's workers read: GEOSVC_DATA_DIR's, else the checkout's `.geosvc`
    (what `make run` uses), built first when missing or stale."""
    path = Path(os.environ.get("GEOSVC_DATA_DIR") or ROOT / ".geosvc")
    build_geodata(path)
    return path


@contextlib.contextmanager
def production_shape(
    *,
    aof: str | None,
    geodata_dir: Path,
    extra_env: dict[str, str] | None = None,
    workers: int = 2,
    worker_queues: list[str] | None = None,
    api_workers: int = 1,
    database: Callable[[Path], Any] | None = None,
) -> Iterator[Stack]:
    """Start everything; yields once the api answers and every worker answers a ping.

    `worker_queues`: one worker per entry, taking those queues (e.g. the paying and the
    bulk pool); otherwise `workers` workers taking every queue. `api_workers`: uvicorn
    worker processes of the api. `database(workdir)`: the PostgreSQL to use instead of
    one `Postgres` (e.g. `pg_replica.StreamingPair`: its `url` may name several hosts)."""
    with tempfile.TemporaryDirectory(prefix="geosvc-drill-") as tmp:
        workdir = Path(tmp)
        os.chmod(workdir, 0o755)  # the postgres user must reach its own dir under it
        data_dir = workdir / "data"
        data_dir.mkdir()
        build_geodata(geodata_dir)  # a no-op when the indices are current
        (data_dir / "indices").symlink_to((geodata_dir / "indices").resolve())
        redis_server = RedisServer(workdir, aof)
        postgres = database(workdir) if database else Postgres(workdir)
        supervisor = Supervisor()
        try:
            redis_server.start()
            postgres.start()
            postgres.create_database()
            port = free_port()
            base_url = f"http://127.0.0.1:{port}"
            env = {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}
            env.update(
                GEOSVC_DATABASE_URL=postgres.url.replace("postgresql://", "postgresql+psycopg://"),
                GEOSVC_REDIS_URL=redis_server.url,
                GEOSVC_REDIS_KEY_PREFIX=f"drill-{secrets.token_hex(3)}:",
                GEOSVC_DATA_DIR=str(data_dir),
                GEOSVC_BASE_URL=base_url,
                GEOSVC_SECRET_PEPPER=secrets.token_hex(16),
                # a bench's nginx runs on this host (compose: the proxy's own address)
                GEOSVC_FORWARDED_ALLOW_IPS="127.0.0.1",
                C_FORCE_ROOT="1",
                PYTHONUNBUFFERED="1",
            )
            env.update(extra_env or {})
            stack = Stack(workdir, redis_server, postgres, env, base_url, supervisor)
            subprocess.run(stack.geosvc("migrate"), env=env, check=True, capture_output=True)
            supervisor.add(
                Service(
                    "api",
                    stack.geosvc("api", "--port", str(port), "--workers", str(api_workers)),
                    env,
                    workdir / "api.log",
                )
            )
            pools = worker_queues or [None] * workers
            for number, queues in enumerate(pools, start=1):
                argv = stack.geosvc(
                    "worker", "--concurrency", "2", "--pool", "prefork",
                    "--hostname", f"w{number}@drill", "--loglevel", "info",
                    *(["--queues", queues] if queues else []),
                )  # fmt: skip
                stack.workers.append(
                    supervisor.add(
                        Service(f"worker{number}", argv, env, workdir / f"w{number}.log")
                    )
                )
            supervisor.add(Service("beat", stack.geosvc("beat"), env, workdir / "beat.log"))
            supervisor.run()
            wait_for(lambda: httpx.get(f"{base_url}/healthz", timeout=1).status_code == 200,
                     "api", 90)  # fmt: skip
            wait_for(lambda: all(w.children() for w in stack.workers), "worker pools", 90)
            yield stack
        finally:
            supervisor.stop()
            with contextlib.suppress(Exception):
                postgres.stop("immediate")
            redis_server.stop()
            keep = os.environ.get("GEOSVC_DRILL_LOGS")  # a directory to keep the logs in
            if keep:
                target = Path(keep) / workdir.name
                target.mkdir(parents=True, exist_ok=True)
                for log in workdir.glob("*.log"):
                    shutil.copy(log, target / log.name)
