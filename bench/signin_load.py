"""Sign-in bursts against /me: median /me latency alone, then while 16 sign-ins run at
once, on a real uvicorn server (SQLite, the local Redis). Prints the ratio.

    .venv/bin/python bench/signin_load.py [--hash-concurrency N]

`--hash-concurrency 0` is the default (half the CPUs); a large value (e.g. 64) is
"unbounded", what the api did before Argon2 went through a bounded pool.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.live_server import service_env, start_live_server  # noqa: E402

PASSWORD = "correct horse battery"


def me_latencies(client: httpx.Client, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        assert client.get("/me").status_code == 200
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hash-concurrency", type=int, default=0)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = service_env(
            database_url=f"sqlite:///{tmp}/geosvc.db",
            redis_url=options.redis_url,
            data_dir=Path(tmp),
            GEOSVC_PASSWORD_HASH_CONCURRENCY=str(options.hash_concurrency),
        )
        server = start_live_server(env, Path(tmp) / "server.log")
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                body = {"email": "bench@example.com", "password": PASSWORD}
                assert client.post("/auth/signup", json=body).status_code == 201
                idle = me_latencies(client, 30)
                stop = threading.Event()

                def sign_in_forever() -> None:
                    while not stop.is_set():
                        httpx.post(f"{server.url}/auth/signin", json=body, timeout=60)

                threads = [threading.Thread(target=sign_in_forever) for _ in range(16)]
                for thread in threads:
                    thread.start()
                time.sleep(1.0)  # let the burst build up before measuring
                busy = me_latencies(client, 30)
                stop.set()
                for thread in threads:
                    thread.join()
        finally:
            server.stop()
    idle_ms, busy_ms = statistics.median(idle), statistics.median(busy)
    print(f"hash concurrency {options.hash_concurrency or 'default (half the CPUs)'}")
    print(f"/me median alone            {idle_ms:8.1f} ms")
    print(f"/me median, 16 sign-ins     {busy_ms:8.1f} ms   ratio {busy_ms / idle_ms:6.1f}x")


if __name__ == "__main__":
    main()
