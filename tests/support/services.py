"""Backing services for tests: the machine's real Redis and PostgreSQL when reachable.

With REQUIRE_SERVICES=1 (CI) an unreachable service is an error, never a skip. Without it,
Redis falls back to a fakeredis TCP server and PostgreSQL-only tests skip.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import redis

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
REDIS_URL = os.environ.get("GEOSVC_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
POSTGRES_ADMIN_URL = os.environ.get(
    "GEOSVC_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


class ServiceUnavailable(RuntimeError):
    pass


def redis_reachable(url: str = REDIS_URL) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


@contextmanager
def redis_url_for_tests() -> Iterator[tuple[str, bool]]:
    """Yield (url, is_real). Real Redis uses a random db-less key space, shared safely."""
    if redis_reachable():
        yield REDIS_URL, True
        return
    if REQUIRE_SERVICES:
        raise ServiceUnavailable(f"Redis at {REDIS_URL} is not reachable (REQUIRE_SERVICES=1)")
    from fakeredis import TcpFakeServer

    from app.embedded_redis import free_port

    class FakeServer(TcpFakeServer):
        # socketserver listens with a backlog of 5. With its accept thread slow (200
        # handler threads polling under the GIL on a loaded machine), a burst of 200
        # connections overflows it, and a dropped SYN is resent after 1 s, then 3 s: past
        # the client's 2 s connect timeout.
        request_queue_size = 512

    port = free_port()
    server = FakeServer(("127.0.0.1", port), server_type="redis")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"redis://127.0.0.1:{port}/0", False
    finally:
        server.shutdown()
        server.server_close()


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


def migrate(env: dict[str, str]) -> None:
    """`geosvc migrate` on the database of `env` (before the processes that use it start)."""
    subprocess.run(
        [sys.executable, "-m", "app.cli", "migrate"], env=env, check=True, capture_output=True
    )
