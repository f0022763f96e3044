"""Issue 21, item 7: `geosvc api` trusts X-Forwarded-For only from
GEOSVC_FORWARDED_ALLOW_IPS (a real `geosvc api` process, real Redis); unset, from no one
(issue 51, item 2). The client address it settled on is read back from the sign-in
failure counter it keys by that address."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from app.kit.embedded_redis import free_port
from app.users.throttle import failures_key
from tests.support.factories import unique_email
from tests.support.fixtures import Backend
from tests.support.live_server import LiveServer, wait_until_healthy

FORWARDED_FOR = "198.51.100.77"


def start_geosvc_api(env: dict[str, str], log_path: Path) -> LiveServer:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**env, "GEOSVC_BASE_URL": url}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "api", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return wait_until_healthy(LiveServer(url, env, process, log_path), 60)


@pytest.fixture(
    params=["192.0.2.10", "127.0.0.1", ""], ids=["proxy-elsewhere", "proxy-local", "no-proxy"]
)
def api_trusting(
    request: pytest.FixtureRequest, backend: Backend, tmp_path: Path
) -> Iterator[tuple[LiveServer, str]]:
    trusted = str(request.param)
    env = backend.env(GEOSVC_FORWARDED_ALLOW_IPS=trusted)
    server = start_geosvc_api(env, tmp_path / "api.log")
    yield server, trusted
    server.stop()


def test_forwarded_for_counts_only_from_a_trusted_proxy(
    api_trusting: tuple[LiveServer, str], backend: Backend
) -> None:
    server, trusted = api_trusting
    email = unique_email()
    wrong = {"email": email, "password": "wrong-password"}
    response = httpx.post(
        f"{server.url}/auth/signin",
        json=wrong,
        headers={"X-Forwarded-For": FORWARDED_FOR},
        timeout=30,
    )
    assert response.status_code == 401

    store = redis.Redis.from_url(backend.redis_url)
    counted = {
        address
        for address in (FORWARDED_FOR, "127.0.0.1")
        if store.exists(backend.key_prefix + failures_key(email, address))
    }
    # We call from 127.0.0.1: only a server trusting it as proxy takes the header's address.
    assert counted == ({FORWARDED_FOR} if trusted == "127.0.0.1" else {"127.0.0.1"})


def test_a_proxy_named_other_than_by_address_is_refused(backend: Backend) -> None:
    """A host name would match no peer (nothing would be trusted, silently): refused."""
    env = backend.env(GEOSVC_FORWARDED_ALLOW_IPS="10.0.0.2, proxy.internal")
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "api", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "GEOSVC_FORWARDED_ALLOW_IPS: 'proxy.internal' is not an IP address or CIDR" in (
        result.stdout + result.stderr
    )
