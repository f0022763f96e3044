"""A real uvicorn server process for end-to-end tests."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from app.kit.embedded_redis import free_port
from tests.support.services import migrate
from tests.support.zygote import SERVERS, ChildProcess

# One prefix per test run: concurrent runs on the shared Redis never take each other's tasks.
TEST_RUN_PREFIX = f"geosvc-test-{secrets.token_hex(4)}:"


@dataclass
class LiveServer:
    url: str
    env: dict[str, str]
    process: ChildProcess
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# What production needs besides GEOSVC_ENV (it refuses `local` payments, a short pepper
# and incomplete Stripe settings); the Stripe values only have to be present.
PRODUCTION_ENV = {
    "GEOSVC_ENV": "production",
    "GEOSVC_PAYMENT_PROVIDER": "stripe",
    "GEOSVC_SECRET_PEPPER": "0123456789abcdef0123456789abcdef",
    "GEOSVC_OAUTH_SIGNING_KEY": "fedcba9876543210fedcba9876543210",
    "GEOSVC_STRIPE_SECRET_KEY": "sk_test_not_used",
    "GEOSVC_STRIPE_WEBHOOK_SECRET": "whsec_not_used",
    "GEOSVC_STRIPE_STANDARD_PRICE": "price_not_used",
    "GEOSVC_STRIPE_METER_EVENT": "not_used",
    "GEOSVC_METRICS_TOKEN": "metrics-token-for-tests",
    "GEOSVC_REDIS_AOF_CHECK": "false",  # the shared test Redis has no AOF
    # Production sends mail; nothing listens on the discard port (no test reads it there).
    "GEOSVC_SMTP_URL": "smtp://127.0.0.1:9",
    "GEOSVC_MAIL_FROM": "Geospatial Data Service <no-reply@example.com>",
}


# Rate and concurrency limits no test reaches unless it sets its own.
UNLIMITED_TENANTS = {
    f"GEOSVC_{plan}_{limit}": "1000000"
    for plan in ("FREE", "STANDARD")
    for limit in ("RATE_PER_S", "BURST", "CONCURRENCY")
}


def service_env(
    *, database_url: str, redis_url: str, data_dir: Path, **extra: str
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}
    env.update(
        GEOSVC_DATABASE_URL=database_url,
        GEOSVC_REDIS_URL=redis_url,
        GEOSVC_DATA_DIR=str(data_dir),
        GEOSVC_SECRET_PEPPER="test-pepper-not-secret-but-32-bytes-long",
        GEOSVC_OAUTH_SIGNING_KEY="test-oauth-key-not-secret-but-32-bytes",
        GEOSVC_METRICS_TOKEN="test-metrics-token-not-secret",  # production servers need one
        GEOSVC_REDIS_KEY_PREFIX=TEST_RUN_PREFIX,
        # Tests play the reverse proxy from 127.0.0.1 (X-Forwarded-For picks a client's
        # address, X-Proxy-Request-ID is nginx's); a client on another loopback address
        # (127.0.0.2-254) reaches the api directly. No proxy is the default (`geosvc dev`).
        GEOSVC_FORWARDED_ALLOW_IPS="127.0.0.1",
        # Every test signs up from 127.0.0.1; the per-IP limits have their own tests.
        GEOSVC_AUTH_RATE_LIMIT_PER_IP="1000000",
        GEOSVC_SIGNIN_MAX_FAILURES_PER_IP="1000000",
        GEOSVC_OAUTH_RATE_LIMIT_PER_IP="1000000",
        # Tests call from many clients on one account; the tenant limits have their own.
        **UNLIMITED_TENANTS,
    )
    env.update(extra)
    return env


def launch_live_server(
    env: dict[str, str],
    log_path: Path,
    *,
    base_url: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
) -> LiveServer:
    """Start uvicorn on `host` and a free port (or `port`) over an already migrated
    database; `wait_until_healthy` next. `base_url`: the public URL it answers as (default:
    its own), e.g. another server's, to play a second api process behind one load
    balancer."""
    port = port or free_port()
    url = f"http://{host}:{port}"
    env = {**env, "GEOSVC_BASE_URL": base_url or url}
    # uvicorn as `geosvc api` runs it (the bounded protocol, no server header), without
    # the command's migration and metrics process group, which tests set up themselves;
    # forked from a process that has imported the app (zygote.py) unless the environment
    # sets what is read at import time
    process: ChildProcess
    if SERVERS.forkable(env):
        process = SERVERS.fork(env, log_path, host=host, port=port)
    else:
        serve = (
            "import uvicorn; from app.http.server import uvicorn_options; "
            f"uvicorn.run('app.main:create_app', factory=True, host='{host}', port={port}, "
            "log_level='info', **uvicorn_options())"
        )
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-c", serve], env=env, stdout=log, stderr=subprocess.STDOUT
            )
    return LiveServer(url=url, env=env, process=process, log_path=log_path)


def start_live_server(env: dict[str, str], log_path: Path, deadline_s: float = 60.0) -> LiveServer:
    migrate(env)
    return wait_until_healthy(launch_live_server(env, log_path), deadline_s)


def wait_until_healthy(server: LiveServer, deadline_s: float) -> LiveServer:
    """Poll /healthz until it answers 200; stop the server and raise if it never does."""
    deadline = time.monotonic() + deadline_s
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{server.log()}")
        try:
            if httpx.get(f"{server.url}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"server did not become healthy:\n{server.log()}")
        time.sleep(0.05)
