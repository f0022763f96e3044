"""Backing services for tests: the machine's real Redis and PostgreSQL when reachable.

With REQUIRE_SERVICES=1 (CI) an unreachable service is an error, never a skip. Without it,
Redis falls back to a fakeredis TCP server and PostgreSQL-only tests skip.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
import redis

from tests.support.zygote import start_command

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
# The fast tier (`make test-fast`) runs on fakeredis even where a real Redis is reachable.
FAKE_REDIS = os.environ.get("GEOSVC_TEST_FAKE_REDIS") == "1"
REDIS_URL = os.environ.get("GEOSVC_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
POSTGRES_ADMIN_URL = os.environ.get(
    "GEOSVC_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


class ServiceUnavailable(RuntimeError):
    pass


def redis_reachable(url: str = REDIS_URL) -> bool:
    if FAKE_REDIS:
        return False
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def forget_keys(prefix: str) -> None:
    """Delete the keys under `prefix` from the machine's Redis. A run's keys left there
    (counters kept for months, task results for a day) slow down every later SCAN on it."""
    if not redis_reachable():
        return
    with redis.Redis.from_url(REDIS_URL) as store:
        keys = list(store.scan_iter(match=f"{prefix}*", count=1000))
        for start in range(0, len(keys), 500):
            store.delete(*keys[start : start + 500])


@contextmanager
def redis_url_for_tests() -> Iterator[tuple[str, bool]]:
    """Yield (url, is_real). Real Redis uses a random db-less key space, shared safely."""
    if redis_reachable():
        yield REDIS_URL, True
        return
    if REQUIRE_SERVICES:
        raise ServiceUnavailable(f"Redis at {REDIS_URL} is not reachable (REQUIRE_SERVICES=1)")
    from app.kit.embedded_redis import die_with_parent, free_port, wait_for_ping

    # In a process of its own, with a longer listen backlog: in this process its handler
    # threads (one per connection, each polling) took the GIL from the tests' event loop,
    # and 200 connections opened at once timed out connecting late in a full run.
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = subprocess.Popen(
        [sys.executable, "-c", _FAKE_REDIS_SERVER, str(port)], preexec_fn=die_with_parent
    )
    try:
        wait_for_ping(url)
        yield url, False
    finally:
        server.terminate()
        server.wait(timeout=10)


# socketserver's listen backlog is 5: a burst of connections beyond it loses SYNs, resent
# after 1 s and 3 s, past the clients' 2 s connect timeout.
_FAKE_REDIS_SERVER = """
import sys
from fakeredis import TcpFakeServer
class Server(TcpFakeServer):
    request_queue_size = 512
Server(("127.0.0.1", int(sys.argv[1])), server_type="redis").serve_forever()
"""


def _psycopg_connect(url: str) -> psycopg.Connection:

    return psycopg.connect(url, autocommit=True, connect_timeout=2)


def postgres_reachable() -> bool:
    try:
        with _psycopg_connect(POSTGRES_ADMIN_URL):
            return True
    except Exception:
        return False


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new empty database for one test session, dropped afterwards."""
    if not postgres_reachable():
        raise ServiceUnavailable(f"PostgreSQL at {POSTGRES_ADMIN_URL} is not reachable")
    name = f"geosvc_test_{secrets.token_hex(4)}"
    with _psycopg_connect(POSTGRES_ADMIN_URL) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with _psycopg_connect(POSTGRES_ADMIN_URL) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def postgres_database_or_skip() -> Iterator[str]:
    """fresh_postgres_database for a fixture: skipped when PostgreSQL is unreachable,
    failed under REQUIRE_SERVICES=1."""
    try:
        with fresh_postgres_database() as url:
            yield url
    except ServiceUnavailable as exc:
        if REQUIRE_SERVICES:
            raise
        pytest.skip(str(exc))


# The databases this test process has brought to the newest schema. A stack's server and
# worker both ask; the second `geosvc migrate` (a Python process: about a second of CPU)
# would find nothing to do. Every test database is new and named once, never rolled back
# behind this (tests that migrate down use databases of their own, through Alembic).
_MIGRATED: set[str] = set()


def migrate(env: dict[str, str]) -> None:
    """`geosvc migrate` on the database of `env` (before the processes that use it start)."""
    database = env.get("GEOSVC_DATABASE_URL")
    if database in _MIGRATED:
        return
    with tempfile.TemporaryDirectory(prefix="geosvc-migrate-") as folder:
        log = Path(folder) / "migrate.log"
        code = start_command(env, ["migrate"], log).wait(timeout=300)
        if code != 0:
            raise RuntimeError(f"geosvc migrate exited {code}:\n{log.read_text(errors='replace')}")
    if database:
        _MIGRATED.add(database)
