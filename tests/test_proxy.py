"""deploy/nginx.conf, the proxy compose puts in front of the api (issue 21, item 1), run by
a real nginx against a real api: TLS, its own limits, nothing secret in its log.

The file is the one compose mounts; only what differs outside a container is rewritten
(the api's address, the ports, the certificate directory, the log file)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.kit.embedded_redis import free_port
from tests.support.fixtures import PerBackend
from tests.support.live_server import LiveServer
from tests.support.services import REQUIRE_SERVICES

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


@dataclass
class Proxy:
    https_url: str
    http_url: str
    access_log: Path


# The files deploy/nginx.conf includes (deploy/proxy/, mounted beside it).
INCLUDED = ("nginx-limits.conf", "nginx-rate-limited.conf")


def with_includes(config: str) -> str:
    """An nginx config of deploy/ with the files it includes written in place, so one
    text holds everything a test rewrites."""
    for name in INCLUDED:
        line = f"include {name};"
        if line in config:
            config = config.replace(line, (ROOT / "deploy" / "proxy" / name).read_text())
    return config


def deployed_config() -> str:
    """deploy/nginx.conf as compose runs it (its includes in place)."""
    return with_includes((ROOT / "deploy" / "nginx.conf").read_text())


def local_config(
    api: str, http_port: int, https_port: int, directory: Path, resolver: str | None = None
) -> str:
    """The deployed file with the api at `api` (host:port) and, when given, the resolver
    (host:port, answers kept 1 s) in place of Docker's."""
    config = deployed_config()
    replacements = {
        "default http://api:8000;": f"default http://{api};",
        "listen 80;": f"listen 127.0.0.1:{http_port};",
        "listen 443 ssl http2;": f"listen 127.0.0.1:{https_port} ssl http2;",
        "/etc/nginx/tls/fullchain.pem;": f"{directory}/tls/fullchain.pem;",
        "/etc/nginx/tls/privkey.pem;": f"{directory}/tls/privkey.pem;",
        "access_log /dev/stdout edge;": f"access_log {directory}/access.log edge;",
    }
    if resolver is not None:
        replacements["resolver 127.0.0.11 valid=10s"] = f"resolver {resolver} valid=1s"
    for old, new in replacements.items():
        assert config.count(old) == 1, old  # the deployed file still has what we rewrite
        config = config.replace(old, new)
    return config


def self_signed(directory: Path) -> None:
    (directory / "tls").mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=127.0.0.1", "-keyout", str(directory / "tls" / "privkey.pem")]
        + ["-out", str(directory / "tls" / "fullchain.pem")],
        check=True,
        capture_output=True,
    )


def require_nginx() -> str:
    if NGINX is None or shutil.which("openssl") is None:
        if REQUIRE_SERVICES:
            pytest.fail("nginx (make nginx) and openssl are required")
        pytest.skip("nginx or openssl not installed (make nginx)")
    return NGINX


@contextmanager
def running_nginx(config: str, directory: Path, http_port: int, https_port: int) -> Iterator[Proxy]:
    """nginx on `config` (a local_config), until its /healthz answers (any status)."""
    nginx = require_nginx()
    conf = directory / "nginx.conf"
    conf.write_text(config)
    main = f"pid {directory}/nginx.pid; error_log {directory}/error.log; daemon off;"
    if os.geteuid() == 0:
        main += " user root;"  # its workers write temp files under this test's directory
    process = subprocess.Popen(
        [nginx, "-p", str(directory), "-c", str(conf), "-g", main],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"https://127.0.0.1:{https_port}"
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            raise AssertionError(f"nginx exited: {process.stderr.read() if process.stderr else ''}")
        try:
            httpx.get(f"{url}/healthz", verify=False, timeout=2)
            break
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.1)
    try:
        yield Proxy(url, f"http://127.0.0.1:{http_port}", directory / "access.log")
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def proxy_to(
    live_server: LiveServer, directory: Path, changes: dict[str, str] | None = None
) -> Iterator[Proxy]:
    """nginx on the deployed file (`changes` made to it) in front of `live_server`."""
    require_nginx()
    self_signed(directory)
    api_port = int(live_server.url.rsplit(":", 1)[1])
    http_port, https_port = free_port(), free_port()
    config = local_config(f"127.0.0.1:{api_port}", http_port, https_port, directory)
    for old, new in (changes or {}).items():
        assert config.count(old) == 1, old  # the deployed file still says it
        config = config.replace(old, new)
    with running_nginx(config, directory, http_port, https_port) as running:
        yield running


@pytest.fixture(scope="module")
def files_nginx() -> Iterator[PerBackend]:
    """The nginx processes this file's tests started, by name; stopped at its end."""
    kept = PerBackend()
    yield kept
    kept.close()


@pytest.fixture
def proxy(
    live_server: LiveServer, tmp_path_factory: pytest.TempPathFactory, files_nginx: PerBackend
) -> Proxy:
    """One nginx on the deployed file in front of the live server, for the file's tests:
    none changes its state but the access log, which each reads from its own offset on."""
    return files_nginx.get(
        f"deployed {live_server.url}",
        lambda: proxy_to(live_server, tmp_path_factory.mktemp("proxy")),
    )


def https(proxy: Proxy) -> httpx.Client:
    return httpx.Client(base_url=proxy.https_url, verify=False, timeout=10)


def test_the_api_answers_through_tls_without_versions(proxy: Proxy) -> None:
    with https(proxy) as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response.headers.get("server") == "nginx"  # no version, no uvicorn


def test_plain_http_redirects_to_https(proxy: Proxy) -> None:
    response = httpx.get(f"{proxy.http_url}/me", timeout=10)
    assert response.status_code == 301
    assert response.headers["location"].startswith("https://")


def test_huge_headers_stop_at_the_proxy(proxy: Proxy, live_server: LiveServer) -> None:
    marker = "big-head-" + os.urandom(4).hex()
    headers = {f"X-Filler-{i}": "a" * 4000 for i in range(10)}
    with https(proxy) as client:
        response = client.get("/healthz", headers={**headers, "X-Request-ID": marker})
    assert response.status_code in (400, 431, 494), response.status_code
    assert marker not in live_server.log()


def test_a_body_over_the_limit_is_413_at_the_proxy(proxy: Proxy) -> None:
    with https(proxy) as client:
        response = client.post("/auth/signin", content=b"x" * (2 * 1024 * 1024))
    assert response.status_code == 413


def test_no_credential_in_the_proxy_log(proxy: Proxy) -> None:
    secret = "svc_live_ak_abc123_" + os.urandom(16).hex()
    logged_before = proxy.access_log.stat().st_size if proxy.access_log.exists() else 0
    with https(proxy) as client:
        response = client.get(f"/me?api_key={secret}")
    assert response.status_code == 400  # the api's refusal, passed through

    def logged_since() -> str:
        return proxy.access_log.read_bytes()[logged_before:].decode(errors="replace")

    deadline = time.monotonic() + 10
    while "GET /me " not in logged_since():  # this request's line, not an earlier test's
        assert time.monotonic() < deadline, "no access line"
        time.sleep(0.05)
    assert secret not in proxy.access_log.read_text()


# The header timeout scaled down (deployed: 10 s): a stalled head is cut off sooner. On
# the stalled head's own nginx: the floods' clients may take longer than this to send
# their heads on a busy machine.
SCALED_HEADER_TIMEOUT_S = 2


def test_headers_that_stall_are_cut_off(live_server: LiveServer, tmp_path: Path) -> None:
    """client_header_timeout (deployed: 10 s, here SCALED_HEADER_TIMEOUT_S): the connection
    is closed without reaching the api."""
    deployed = "client_header_timeout 10s;"
    assert deployed in deployed_config()
    scaled = {deployed: f"client_header_timeout {SCALED_HEADER_TIMEOUT_S}s;"}
    with proxy_to(live_server, tmp_path, scaled) as proxy:
        elapsed = _seconds_until_a_stalled_head_is_cut_off(proxy)
    # cut off by its timeout (nginx's clock is cached: a little early at most), well
    # before the deployed one
    assert SCALED_HEADER_TIMEOUT_S - 0.5 <= elapsed < 10, elapsed


def _seconds_until_a_stalled_head_is_cut_off(proxy: Proxy) -> float:
    import ssl

    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    host, port = proxy.https_url.removeprefix("https://").split(":")
    started = time.monotonic()
    with (
        socket.create_connection((host, int(port)), timeout=30) as raw,
        context.wrap_socket(raw, server_hostname=host) as sock,
    ):
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Half: ")
        try:
            while sock.recv(4096):
                pass
        except (ConnectionResetError, ssl.SSLError):
            pass
    return time.monotonic() - started


def _flood(
    proxy: Proxy, sources: list[str], credential: str, requests: int, scheme: str = "Bearer "
) -> list[httpx.Response]:
    """`requests` calls of /healthz with `credential` (after `scheme`, the scheme and its
    separator as the client spells them) from each address of `sources`, all at once (30
    at a time per address, under the per-address connection limit)."""

    async def from_address(source: str) -> list[httpx.Response]:
        transport = httpx.AsyncHTTPTransport(local_address=source, verify=False)
        headers = {"Authorization": f"{scheme}{credential}"}
        async with httpx.AsyncClient(
            base_url=proxy.https_url, transport=transport, headers=headers, timeout=30
        ) as client:
            gate = asyncio.Semaphore(30)

            async def one() -> httpx.Response:
                async with gate:
                    return await client.get("/healthz")

            return list(await asyncio.gather(*(one() for _ in range(requests))))

    async def run() -> list[httpx.Response]:
        answers = await asyncio.gather(*(from_address(source) for source in sources))
        return [answer for per_address in answers for answer in per_address]

    return asyncio.run(run())


# The per-key limit scaled down for the flood test: a machine busy with other tests may not
# send 100 requests a second through TLS and the api, and a flood slower than the limit
# is never refused. The deployed numbers are checked as they are written.
KEY_RATE, KEY_BURST = 5, 10
# Requests per address in a flood: 5 addresses send ten times the key's burst. A flood is
# shed while this machine sends faster than KEY_RATE (one request in 0.2 s, all addresses
# together); 950, the deployed burst's scale, took 15-30 s a case on two busy cores.
FLOOD_PER_ADDRESS = 2 * KEY_BURST


@pytest.fixture
def scaled_proxy(
    live_server: LiveServer, tmp_path_factory: pytest.TempPathFactory, files_nginx: PerBackend
) -> Proxy:
    """One nginx on the deployed file with its per-key limit scaled down, for the file's
    flood tests. Each flood sends credentials of its own (a new bucket); the unread
    headers' tests share their one bucket, as every client does."""
    deployed_to_here = {  # the deployed file: 100/s, bursts of 200
        "zone=req_per_key:10m rate=100r/s;": f"zone=req_per_key:10m rate={KEY_RATE}r/s;",
        "zone=req_per_key burst=200 nodelay;": f"zone=req_per_key burst={KEY_BURST} nodelay;",
    }
    return files_nginx.get(
        f"scaled {live_server.url}",
        lambda: proxy_to(live_server, tmp_path_factory.mktemp("scaled-proxy"), deployed_to_here),
    )


def key_id(name: str) -> str:
    """A key id of its own per test case (its own bucket on the shared proxy)."""
    return f"{name}{os.urandom(4).hex()}"


# The scheme as clients may spell it (RFC 9110: case-insensitive), and as the api
# accepts it (tests/api_keys/test_scheme.py): each is the same credential to the proxy.
SCHEME_SPELLINGS = ["Bearer ", "BEARER ", "bearer ", "Bearer  ", "Bearer\t", "bEaReR \t "]


def _assert_shed(answers: list[httpx.Response], elapsed: float) -> None:
    """What one bucket of the per-key zone allows in `elapsed`, and refusals in the
    API's envelope for the rest."""
    passed = sum(1 for answer in answers if answer.status_code == 200)
    refused = [answer for answer in answers if answer.status_code == 429]
    statuses = Counter(answer.status_code for answer in answers)
    assert set(statuses) <= {200, 429}, statuses
    # what the key's bucket allows in that time, whatever the speed of this machine
    assert passed <= KEY_BURST + 1 + KEY_RATE * elapsed + 10, (statuses, elapsed)
    assert refused, (statuses, elapsed)
    assert refused[0].json()["error"]["code"] == "RATE_LIMITED"
    assert refused[0].json()["error"]["retryAfterSeconds"] == 1
    assert refused[0].headers["retry-after"] == "1"


@pytest.mark.parametrize("scheme", SCHEME_SPELLINGS, ids=repr)
def test_one_credential_from_many_addresses_is_shed_at_the_proxy(
    scaled_proxy: Proxy, scheme: str
) -> None:
    """Issue 36, item 5: five addresses, each under the per-address limit, sending one key
    together pass the per-key limit (deployed: 100/s, bursts of 200; here KEY_RATE and
    KEY_BURST): the proxy refuses the excess itself, in the API's envelope, while another
    key from another address goes through. Issue 51, item 1: whatever the case of the
    scheme and the spaces or tabs after it."""
    proxy = scaled_proxy
    flooded_id = key_id("flood")
    flooded = f"svc_live_ak_{flooded_id}_" + "A" * 8 + os.urandom(12).hex()
    other = f"svc_live_ak_{key_id('quiet')}_" + "B" * 8 + os.urandom(12).hex()
    started = time.monotonic()
    # 127.0.0.3-7, FLOOD_PER_ADDRESS each: within the per-address burst (200), ten times
    # the key's burst together
    answers = _flood(
        proxy, [f"127.0.0.{n}" for n in range(3, 8)], flooded, FLOOD_PER_ADDRESS, scheme
    )
    _assert_shed(answers, time.monotonic() - started)
    # a whole burst of another key at once, right after the flood
    quiet = _flood(proxy, ["127.0.0.2"], other, KEY_BURST, scheme)
    assert [answer.status_code for answer in quiet] == [200] * KEY_BURST
    # another credential sharing the key id but not the secret is not in the flood's bucket
    guessed = f"svc_live_ak_{flooded_id}_" + "C" * 8 + os.urandom(12).hex()
    guesses = _flood(proxy, ["127.0.0.8"], guessed, KEY_BURST)
    assert {answer.status_code for answer in guesses} == {200}


def test_a_test_mode_key_has_its_own_bucket_at_the_proxy(scaled_proxy: Proxy) -> None:
    """Issue 57, item 1: a svc_test_ak_ key is read like a live key (its own bucket), not
    counted in the one "unparsed" bucket that every unread header shares."""
    proxy = scaled_proxy
    flooded = f"svc_test_ak_{key_id('flood')}_" + "A" * 8 + os.urandom(12).hex()
    other = f"svc_test_ak_{key_id('quiet')}_" + "B" * 8 + os.urandom(12).hex()
    started = time.monotonic()
    answers = _flood(
        proxy, [f"127.0.0.{n}" for n in range(3, 8)], flooded, FLOOD_PER_ADDRESS, "Bearer "
    )
    _assert_shed(answers, time.monotonic() - started)
    quiet = _flood(proxy, ["127.0.0.2"], other, KEY_BURST, "Bearer ")
    assert [answer.status_code for answer in quiet] == [200] * KEY_BURST


# Authorization headers neither the proxy's map nor the api reads as a credential: a
# no-break space (obs-text), a scheme without a separator, one the api has no use for.
UNREAD = [("Bearer\xa0", "svc_live_ak_flood2_"), ("Bearer", "svc_live_ak_flood3_")]
UNREAD += [("Token ", "svc_live_ak_flood4_"), ("Bearer ", "not-a-credential-")]


@pytest.mark.parametrize(("scheme", "prefix"), UNREAD, ids=repr)
def test_a_header_the_proxy_cannot_read_gets_no_more_room_than_a_key(
    scaled_proxy: Proxy, scheme: str, prefix: str
) -> None:
    """Issue 51, item 1: such headers are not let through uncounted; all of them share one
    bucket of the per-key size, whatever credential they seem to carry, so a new random
    value per request gains nothing. A request without the header is not in it."""
    proxy = scaled_proxy
    started = time.monotonic()
    sources = [f"127.0.0.{n}" for n in range(3, 8)]

    async def run() -> list[httpx.Response]:
        async def from_address(source: str) -> list[httpx.Response]:
            transport = httpx.AsyncHTTPTransport(local_address=source, verify=False)
            async with httpx.AsyncClient(
                base_url=proxy.https_url, transport=transport, timeout=30
            ) as client:
                gate = asyncio.Semaphore(30)

                async def one() -> httpx.Response:
                    # a different value each time: no bucket of its own to fill
                    value = f"{scheme}{prefix}{'A' * 8}{os.urandom(12).hex()}"
                    async with gate:
                        return await client.get(
                            "/healthz", headers={"Authorization": value.encode("latin-1")}
                        )

                return list(await asyncio.gather(*(one() for _ in range(FLOOD_PER_ADDRESS))))

        answers = await asyncio.gather(*(from_address(source) for source in sources))
        return [answer for per_address in answers for answer in per_address]

    _assert_shed(asyncio.run(run()), time.monotonic() - started)
    with https(proxy) as client:
        assert client.get("/healthz").status_code == 200  # no header: not that bucket
