"""A Redis for the all-in-one `geosvc dev` mode.

A real `redis-server` on a free loopback port when one is installed (about 1.5 ms per
Celery round trip), else fakeredis's TCP server in a thread (same protocol, slower
blocking pops). Either way the API, Celery and beat use the production code path.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator

import redis


def die_with_parent() -> None:
    """Linux: a child process gets SIGTERM when `geosvc dev` exits, however it exits
    (uvicorn re-raises SIGTERM after its shutdown, which skips `finally` blocks)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_ping(url: str, deadline_s: float = 10.0) -> None:
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            client.ping()
            return
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


@contextlib.contextmanager
def embedded_redis() -> Iterator[str]:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    binary = shutil.which("redis-server")
    if binary:
        with tempfile.TemporaryDirectory() as workdir:
            process = subprocess.Popen(
                [
                    binary,
                    "--bind",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    workdir,
                ],
                stdout=subprocess.DEVNULL,
                preexec_fn=die_with_parent,
            )
            try:
                wait_for_ping(url)
                yield url
            finally:
                process.terminate()
                process.wait(timeout=10)
        return
    from fakeredis import TcpFakeServer

    server = TcpFakeServer(("127.0.0.1", port), server_type="redis")
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="fakeredis")
    thread.start()
    try:
        wait_for_ping(url)
        yield url
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def reachable_or_embedded_redis(url: str) -> Iterator[str]:
    """`url` if a Redis answers there, else an embedded one (for benches and tools)."""
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError:
        with embedded_redis() as embedded:
            yield embedded
        return
    yield url
