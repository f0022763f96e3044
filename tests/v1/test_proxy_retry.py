"""A metered GET that nginx sends to a second api after the first committed it and died is
charged once (issue 43: the multi-host drill's extra credit).

Real nginx from deploy/nginx.conf (as tests/test_proxy.py runs it), with the api as an
upstream group of two servers: first a host that dies after the commit, then the real api
(`backup`: only once the first failed). The dying host is a TCP relay on 127.0.0.1 that
passes the request to the real api, reads its whole answer (so the api has committed),
and then drops nginx's connection without a byte: what nginx sees of an api host
SIGKILLed between its commit and its answer, at a moment fixed rather than raced. nginx
then sends the same request to the real api (`proxy_next_upstream error`)."""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.kit.embedded_redis import free_port
from tests.mcp.conftest import Stack
from tests.test_proxy import Proxy, deployed_config, require_nginx, running_nginx, self_signed
from tests.v1.conftest import Client, ledger_rows

# One backend is enough: what is checked is Redis's counter and the ledger's unique call id.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
POPULATION = {"postal_code": "10001"}
GEOCODE = {"query": "Austin, TX", "limit": 1}


class DiesAfterCommit:
    """An api host that runs each request on `api` (host:port) and dies before answering."""

    def __init__(self, api: str) -> None:
        self.api_host, self.api_port = api.rsplit(":", 1)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.answered: list[tuple[str, int]] = []  # (request line, the api's status)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(10)
                try:
                    self._relay_then_die(conn)
                except OSError:
                    pass

    def _relay_then_die(self, conn: socket.socket) -> None:
        request = b""
        while b"\r\n\r\n" not in request and len(request) < 65536:
            chunk = conn.recv(65536)
            if not chunk:
                return
            request += chunk
        # nginx asks for `Connection: close`, so the api's answer ends with its connection.
        with socket.create_connection((self.api_host, int(self.api_port)), timeout=30) as api:
            api.sendall(request)
            answer = b""
            while chunk := api.recv(65536):
                answer += chunk
        status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
        self.answered.append((request.split(b"\r\n", 1)[0].decode(), status))
        # SIGKILL of the host: the connection goes without an answer (a reset).
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        self.listener.close()


def retrying_config(dying: int, api: str, http_port: int, https_port: int, directory: Path) -> str:
    """deploy/nginx.conf with the api as an upstream group: the dying host first (never
    marked down: every request tries it), the real api behind it."""
    config = deployed_config()
    upstream = (
        "    upstream api_hosts {\n"
        f"        server 127.0.0.1:{dying} max_fails=0;\n"
        f"        server {api} backup;\n"
        "    }\n    map $host $api {"
    )
    replacements = {
        "    map $host $api {": upstream,
        "default http://api:8000;": "default http://api_hosts;",  # a group: no resolver
        "listen 80;": f"listen 127.0.0.1:{http_port};",
        "listen 443 ssl http2;": f"listen 127.0.0.1:{https_port} ssl http2;",
        "/etc/nginx/tls/fullchain.pem;": f"{directory}/tls/fullchain.pem;",
        "/etc/nginx/tls/privkey.pem;": f"{directory}/tls/privkey.pem;",
        "access_log /dev/stdout edge;": f"access_log {directory}/access.log edge;",
    }
    for old, new in replacements.items():
        assert config.count(old) == 1, old  # the deployed file still has what we rewrite
        config = config.replace(old, new)
    return config


@pytest.fixture
def dying_host(v1_stack: Stack) -> Iterator[DiesAfterCommit]:
    host = DiesAfterCommit(v1_stack.server.url.removeprefix("http://"))
    yield host
    host.close()


@pytest.fixture
def retrying_proxy(v1_stack: Stack, dying_host: DiesAfterCommit, tmp_path: Path) -> Iterator[Proxy]:
    require_nginx()
    self_signed(tmp_path)
    http_port, https_port = free_port(), free_port()
    api = v1_stack.server.url.removeprefix("http://")
    config = retrying_config(dying_host.port, api, http_port, https_port, tmp_path)
    with running_nginx(config, tmp_path, http_port, https_port) as running:
        yield running


def rows_once_drained(stack: Stack, client: Client, last_tool: str) -> list[tuple[str, int]]:
    """The account's ledger rows once a row of `last_tool`, its latest call, is in: the
    outbox drains in order, so everything before it is in too."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        rows = ledger_rows(stack, client.user_id)
        if any(tool == last_tool for tool, _ in rows):
            return rows
        time.sleep(0.05)
    raise AssertionError(f"no {last_tool} row within 20 s: {ledger_rows(stack, client.user_id)}")


def test_a_get_retried_after_its_commit_is_charged_once(
    v1_stack: Stack, client: Client, dying_host: DiesAfterCommit, retrying_proxy: Proxy
) -> None:
    key = client.api.headers["Authorization"]
    with httpx.Client(base_url=retrying_proxy.https_url, verify=False, timeout=30) as https:
        response = https.get("/v1/population", params=POPULATION, headers={"Authorization": key})

    # The first attempt ran on the api and was committed there; its host died unanswered.
    calls = [(line, status) for line, status in dying_host.answered if "/v1/" in line]
    assert calls == [("GET /v1/population?postal_code=10001 HTTP/1.1", 200)]
    # nginx retried on the other api, which answered the data.
    assert response.status_code == 200, response.text
    assert response.json()["postalCode"] == "10001"
    assert response.headers["credits-charged"] == "1"
    # A later call, straight to the api, marks where the ledger is drained to.
    assert client.api.get("/v1/geocode", params=GEOCODE).status_code == 200
    rows = rows_once_drained(v1_stack, client, "geocode")
    assert rows == [("geocode", 1), ("get_population", 1)]
    assert client.usage()["used"] == 2


# Linux answers on all of 127.0.0.0/8: a caller on this address reaches the api directly,
# not from the tests' proxy address (GEOSVC_FORWARDED_ALLOW_IPS=127.0.0.1).
STRANGER_ADDRESS = "127.0.0.52"
REQUEST_ID = {"X-Proxy-Request-ID": "0123456789abcdef0123456789abcdef"}


def test_a_retry_id_from_a_caller_not_a_proxy_is_ignored(v1_stack: Stack, client: Client) -> None:
    """Issue 51, item 2: past the proxy, a caller sending the header twice with the same
    question is charged twice (the api drops the header from any address but the proxy's)."""
    transport = httpx.HTTPTransport(local_address=STRANGER_ADDRESS)
    with httpx.Client(
        base_url=v1_stack.server.url, transport=transport, headers=client.api.headers, timeout=30
    ) as direct:
        first = direct.get("/v1/population", params=POPULATION, headers=REQUEST_ID)
        again = direct.get("/v1/population", params=POPULATION, headers=REQUEST_ID)
        marker = direct.get("/v1/geocode", params=GEOCODE, headers=REQUEST_ID)

    assert [r.status_code for r in (first, again, marker)] == [200] * 3
    assert [r.headers["credits-charged"] for r in (first, again)] == ["1", "1"]
    assert int(again.headers["credits-used"]) == int(first.headers["credits-used"]) + 1
    rows = rows_once_drained(v1_stack, client, "geocode")
    assert rows == [("geocode", 1), ("get_population", 1), ("get_population", 1)]
    assert client.usage()["used"] == 3


# Two runs of what beat runs every 5 minutes, the second 5 minutes later: it takes off
# what the first run's snapshot counted and the ledger still lacks.
RECONCILE_TWICE = """
from datetime import timedelta
from app.kit.clock import utcnow
from app.kit.db import new_session
from app.metering.reconcile import reconcile
from app.kit.redis_client import sync_redis
with new_session() as session:
    first = utcnow()
    reconcile(session, sync_redis(), now=first)
    reconcile(session, sync_redis(), now=first + timedelta(minutes=5))
"""


def test_two_accounts_sending_one_retry_id_are_each_charged(
    v1_stack: Stack, client: Client, other: Client
) -> None:
    """Issue 51, item 2: the retry key is the account's. The same proxy request id, tool
    and arguments from another account is another call, in Redis and in the ledger, and
    reconciliation leaves both counters where they are. (The tests' proxy address sends
    the header here, as nginx would.)"""
    answers = [
        account.api.get("/v1/population", params=POPULATION, headers=REQUEST_ID)
        for account in (client, other)
    ]
    assert [a.status_code for a in answers] == [200, 200]
    assert [a.headers["credits-charged"] for a in answers] == ["1", "1"]
    for account in (client, other):
        assert account.api.get("/v1/geocode", params=GEOCODE).status_code == 200
        rows = rows_once_drained(v1_stack, account, "geocode")
        assert rows == [("geocode", 1), ("get_population", 1)]

    subprocess.run(
        [sys.executable, "-c", RECONCILE_TWICE],
        env=v1_stack.server.env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    for account in (client, other):
        assert account.usage()["used"] == len(ledger_rows(v1_stack, account.user_id)) == 2
