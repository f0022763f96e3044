"""Memory of an api process under clients that send endless request headers, and the
cost of the bounded protocol on ordinary requests (issue 21, item 1).

Starts uvicorn twice on the embedded default (SQLite in a temp dir, the local Redis of
GEOSVC_REDIS_URL, default redis://127.0.0.1:6379/0, under a private key prefix): once with
uvicorn's own httptools protocol (what `geosvc api` served before) and once with
`app.http.server:BoundedHttpTools` (what it serves now). For each:
- RSS growth of the server after N connections each offered M MB of headers, measured
  while those connections are still open;
- keep-alive GET /healthz requests per second from one client thread, and the ratio.

    .venv/bin/python bench/request_bounds.py [--connections 20] [--megabytes 5]
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import select
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.kit.embedded_redis import free_port  # noqa: E402

PROTOCOLS = {
    "before (httptools)": "httptools",
    "after (bounded)": "app.http.server:BoundedHttpTools",
}


def rss_kib(pid: int) -> int:
    match = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(match.group(1)) if match else 0


def start(protocol: str, directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}
    env.update(
        GEOSVC_DATABASE_URL=f"sqlite:///{directory / 'bench.db'}",
        GEOSVC_REDIS_URL=os.environ.get("GEOSVC_REDIS_URL", "redis://127.0.0.1:6379/0"),
        GEOSVC_REDIS_KEY_PREFIX=f"bench-bounds-{secrets.token_hex(4)}:",
        GEOSVC_DATA_DIR=str(ROOT / ".geosvc"),
        GEOSVC_LOG_LEVEL="WARNING",
    )
    subprocess.run(
        [sys.executable, "-m", "app.cli", "migrate"], env=env, check=True, capture_output=True
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "app.main:create_app",
            "--factory",
            "--port",
            str(port),
            "--http",
            protocol,
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("server did not start")
        time.sleep(0.1)


def flood(port: int, connections: int, megabytes: int) -> list[socket.socket]:
    line = b"X-Filler: " + b"a" * 8000 + b"\r\n"
    socks = []
    for _ in range(connections):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        sent = 0
        while sent < megabytes * 1024 * 1024:
            if select.select([sock], [], [], 0)[0]:
                break  # answered (431) or closed
            try:
                sock.sendall(line)
            except OSError:
                break
            sent += len(line)
        socks.append(sock)
    return socks


def requests_per_s(url: str, seconds: float = 5.0) -> float:
    with httpx.Client(base_url=url, timeout=10) as client:
        for _ in range(50):
            client.get("/healthz")
        done, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            client.get("/healthz")
            done += 1
        return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--megabytes", type=int, default=5)
    args = parser.parse_args()
    rates = {}
    print(f"{args.connections} connections x {args.megabytes} MB of headers each")
    print(f"{'server':22} {'RSS before':>11} {'RSS after':>10} {'growth':>9} {'GET/s':>8}")
    for label, protocol in PROTOCOLS.items():
        with tempfile.TemporaryDirectory() as directory:
            process, url = start(protocol, Path(directory))
            try:
                rates[label] = requests_per_s(url)
                before = rss_kib(process.pid)
                socks = flood(int(url.rsplit(":", 1)[1]), args.connections, args.megabytes)
                time.sleep(1.0)  # let the server read what is in flight before measuring
                after = rss_kib(process.pid)
                for sock in socks:
                    sock.close()
            finally:
                process.terminate()
                process.wait(timeout=15)
        print(
            f"{label:22} {before / 1024:9.0f} MB {after / 1024:8.0f} MB "
            f"{(after - before) / 1024:7.0f} MB {rates[label]:8.0f}"
        )
    before_rate, after_rate = rates.values()
    print(f"GET/s after/before: {after_rate / before_rate:.2f}")


if __name__ == "__main__":
    main()
