"""The proxy Kubernetes runs in front of the api (issue 51, item 6): the ConfigMap
geosvc-proxy as `kubectl kustomize` renders it, run by a real nginx against a real api.
The test plays the ingress controller: its requests come from 127.0.0.1, the address
the rewritten config trusts in place of the pod range, with the client's address in
X-Forwarded-For; any other local address is a pod the config does not trust.

Only what differs outside a cluster is rewritten (ports, the api's address, the trusted
range, paths), and the limits are scaled down as tests/test_proxy.py scales them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from app.kit.embedded_redis import free_port
from tests.support.kubernetes import KUBECTL, PRODUCTION
from tests.support.live_server import LiveServer
from tests.support.services import REQUIRE_SERVICES
from tests.test_proxy import KEY_BURST, KEY_RATE, require_nginx

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

# The per-address limit scaled down like the per-key one (deployed: 100/s, bursts of 200).
ADDRESS_RATE, ADDRESS_BURST = 20, 40
INGRESS = "127.0.0.1"  # the controller's pod, as far as this config knows
TEMP_DIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")  # nginx's, under /tmp


def rendered_proxy_files() -> dict[str, str]:
    """The data of the ConfigMap geosvc-proxy in the production overlay."""
    if KUBECTL is None:
        if REQUIRE_SERVICES:
            pytest.fail("kubectl (with its built-in kustomize) is required")
        pytest.skip("kubectl not installed")
    done = subprocess.run(
        [KUBECTL, "kustomize", str(PRODUCTION)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    maps = [
        o
        for o in yaml.safe_load_all(done.stdout)
        if o and o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("geosvc-proxy-")
    ]
    assert len(maps) == 1, maps
    return dict(maps[0]["data"])


def rewrite(text: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        assert text.count(old) == 1, old  # the rendered file still says it
        text = text.replace(old, new)
    return text


@dataclass
class ClusterProxy:
    url: str
    access_log: Path


@pytest.fixture
def cluster_proxy(live_server: LiveServer, tmp_path: Path) -> Iterator[ClusterProxy]:
    nginx = require_nginx()
    files = rendered_proxy_files()
    port, health_port = free_port(), free_port()
    api = live_server.url.removeprefix("http://")
    files["nginx.conf"] = rewrite(
        files["nginx.conf"],
        {
            "pid /tmp/nginx.pid;": f"pid {tmp_path}/nginx.pid;",
            "listen 8080;": f"listen 127.0.0.1:{port};",
            "listen 8081;": f"listen 127.0.0.1:{health_port};",
            "proxy_pass http://geosvc-api;": f"proxy_pass http://{api};",
            "set_real_ip_from 10.244.0.0/16;": f"set_real_ip_from {INGRESS};",
            "access_log /dev/stdout edge;": f"access_log {tmp_path}/access.log edge;",
            **{f"_temp_path /tmp/{d};": f"_temp_path {tmp_path}/{d};" for d in TEMP_DIRS},
        },
    )
    files["nginx-limits.conf"] = rewrite(
        files["nginx-limits.conf"],
        {
            "zone=req_per_key:10m rate=100r/s;": f"zone=req_per_key:10m rate={KEY_RATE}r/s;",
            "zone=req_per_key burst=200 nodelay;": f"zone=req_per_key burst={KEY_BURST} nodelay;",
            "zone=req_per_ip:10m rate=100r/s;": f"zone=req_per_ip:10m rate={ADDRESS_RATE}r/s;",
            "zone=req_per_ip burst=200 nodelay;": f"zone=req_per_ip burst={ADDRESS_BURST} nodelay;",
        },
    )
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    main = "daemon off;" + (" user root;" if os.geteuid() == 0 else "")
    process = subprocess.Popen(
        [nginx, "-e", "stderr", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")]
        + ["-g", main],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            raise AssertionError(f"nginx exited: {process.stderr.read() if process.stderr else ''}")
        try:
            if httpx.get(f"http://127.0.0.1:{health_port}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "nginx did not answer its probe"
        time.sleep(0.1)
    try:
        yield ClusterProxy(f"http://127.0.0.1:{port}", tmp_path / "access.log")
    finally:
        process.terminate()
        process.wait(timeout=10)


def burst(
    proxy: ClusterProxy, requests: list[dict[str, str]], source: str = INGRESS
) -> list[httpx.Response]:
    """GET /healthz once per header set, all at once (30 at a time) from `source`."""

    async def run() -> list[httpx.Response]:
        transport = httpx.AsyncHTTPTransport(local_address=source)
        async with httpx.AsyncClient(base_url=proxy.url, transport=transport, timeout=30) as http:
            gate = asyncio.Semaphore(30)

            async def one(headers: dict[str, str]) -> httpx.Response:
                async with gate:
                    return await http.get("/healthz", headers=headers)

            return list(await asyncio.gather(*(one(headers) for headers in requests)))

    return asyncio.run(run())


def shed(answers: list[httpx.Response], rate: int, burst_size: int, elapsed: float) -> None:
    """At most what one bucket allows in `elapsed`; the rest refused in the envelope."""
    statuses = Counter(answer.status_code for answer in answers)
    assert set(statuses) <= {200, 429}, statuses
    assert statuses[200] <= burst_size + 1 + rate * elapsed + 10, (statuses, elapsed)
    refused = next(answer for answer in answers if answer.status_code == 429)
    assert refused.json()["error"]["code"] == "RATE_LIMITED"
    assert refused.headers["retry-after"] == "1"


def test_one_key_from_many_clients_is_shed_whatever_the_scheme_spelling(
    cluster_proxy: ClusterProxy,
) -> None:
    """The ingress had no per-credential limit: here one key from 5 client addresses
    (each within its own limit) is shed, its scheme spelt as in tests/test_proxy.py."""
    key = "svc_live_ak_flood1_" + "A" * 8 + os.urandom(12).hex()
    spellings = ["Bearer ", "BEARER ", "bearer ", "Bearer  ", "Bearer\t"]
    requests = [
        {"Authorization": f"{spellings[n % 5]}{key}", "X-Forwarded-For": f"198.51.100.{n % 5}"}
        for n in range(5 * ADDRESS_BURST)
    ]
    started = time.monotonic()
    answers = burst(cluster_proxy, requests)
    shed(answers, KEY_RATE, KEY_BURST, time.monotonic() - started)
    other = "svc_live_ak_quiet1_" + "B" * 8 + os.urandom(12).hex()
    quiet = [{"Authorization": f"Bearer {other}", "X-Forwarded-For": "198.51.100.9"}] * 10
    assert [answer.status_code for answer in burst(cluster_proxy, quiet)] == [200] * 10


def test_each_client_address_has_its_own_limit_behind_the_ingress(
    cluster_proxy: ClusterProxy,
) -> None:
    """Every request comes from the controller's pod: the per-address limit keys on the
    client it names (not on the pod, which would throttle every client together)."""
    started = time.monotonic()
    answers = burst(cluster_proxy, [{"X-Forwarded-For": "198.51.100.20"}] * (4 * ADDRESS_BURST))
    shed(answers, ADDRESS_RATE, ADDRESS_BURST, time.monotonic() - started)
    other = burst(cluster_proxy, [{"X-Forwarded-For": "198.51.100.21"}] * 10)
    assert [answer.status_code for answer in other] == [200] * 10
    log = cluster_proxy.access_log.read_text()
    assert "198.51.100.21 " in log  # the address logged and passed on is the client's


def test_a_peer_other_than_the_ingress_cannot_choose_its_address(
    cluster_proxy: ClusterProxy,
) -> None:
    """From an address outside the trusted range, X-Forwarded-For is ignored: a new
    address per request gains nothing, all count as the peer's own."""
    requests = [{"X-Forwarded-For": f"203.0.113.{n % 250}"} for n in range(4 * ADDRESS_BURST)]
    started = time.monotonic()
    answers = burst(cluster_proxy, requests, source="127.0.0.2")
    shed(answers, ADDRESS_RATE, ADDRESS_BURST, time.monotonic() - started)
    assert "203.0.113." not in cluster_proxy.access_log.read_text()
