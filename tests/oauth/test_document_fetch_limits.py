"""What a stranger's client_id URL may cost the service (issue 36 item 2): a fetch ends
within its total deadline however slowly the server dribbles, a few run at once per
process and per remote host (more are refused at once), a failure is remembered
briefly, and /authorize, /token and /register are limited per client address.

Against a live server whose development setting admits loopback documents; each request
says where it comes from with X-Forwarded-For (the server trusts it from 127.0.0.1, as
from the proxy), so the per-address rate is met only where a test means it."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from urllib.parse import urlencode

import httpx
import pytest

from tests.fakes.oauth_host import Answer, MetadataServer
from tests.fakes.slow_http import DribblingServer
from tests.support.factories import sign_up
from tests.support.fixtures import Backend
from tests.support.live_server import LiveServer, start_live_server

RATE = 5
TIMEOUT_S = 4


def loopback_server(
    backend: Backend, tmp_path_factory: pytest.TempPathFactory, name: str, **env: str
) -> LiveServer:
    """A live server that fetches loopback documents (the development setting)."""
    log = tmp_path_factory.mktemp(name) / f"server-{backend.name}.log"
    return start_live_server(backend.env(GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK="true", **env), log)


@pytest.fixture(scope="module")
def server(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = loopback_server(
        backend,
        tmp_path_factory,
        "cimd-limits",
        GEOSVC_OAUTH_CIMD_TIMEOUT_S=str(TIMEOUT_S),
        GEOSVC_OAUTH_CIMD_MAX_FETCHES="3",
        GEOSVC_OAUTH_CIMD_MAX_FETCHES_PER_HOST="2",
        GEOSVC_OAUTH_CIMD_FAILURE_CACHE_S="60",
        GEOSVC_OAUTH_RATE_LIMIT_PER_IP=str(RATE),
    )
    yield live
    live.stop()


@pytest.fixture
def dribbler() -> Iterator[DribblingServer]:
    slow = DribblingServer(["127.0.0.1", "127.0.0.2", "127.0.0.3"], interval_s=0.5).start()
    yield slow
    slow.stop()


def stranger() -> dict[str, str]:
    """A client address of its own (one of 16 million: no other test or run shares it)."""
    return {"X-Forwarded-For": "10." + ".".join(str(b) for b in secrets.token_bytes(3))}


def authorize(
    server: LiveServer, client_id: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    query = urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": "http://127.0.0.1:1/callback",
            "state": "s",
            "code_challenge": "x" * 43,
            "code_challenge_method": "S256",
        }
    )
    return httpx.get(f"{server.url}/authorize?{query}", headers=headers or stranger(), timeout=30)


def wait_until(check: object, deadline_s: float = 10.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.02)


def test_a_dribbling_document_is_cut_off_at_the_total_deadline(
    server: LiveServer, dribbler: DribblingServer
) -> None:
    """One byte every 0.5 s never trips a per-read timeout; the total deadline ends it."""
    page = authorize(server, dribbler.url("/dribble.json"))
    assert page.status_code == 400
    assert f"within {TIMEOUT_S} s" in page.text
    assert "location" not in page.headers


def test_fetches_beyond_the_slots_are_refused_at_once(
    server: LiveServer, dribbler: DribblingServer
) -> None:
    """Two fetches per remote host, three per process: the next is a 503, not a wait."""
    with ThreadPoolExecutor(3) as pool:
        held: list[Future[httpx.Response]] = [
            pool.submit(authorize, server, dribbler.url(f"/held-{n}.json")) for n in range(2)
        ]
        wait_until(lambda: dribbler.connections["127.0.0.1"] >= 2)
        same_host = authorize(server, dribbler.url("/third.json"))
        assert same_host.status_code == 503, same_host.text
        assert "from this host" in same_host.text
        assert int(same_host.headers["Retry-After"]) > 0

        held.append(pool.submit(authorize, server, dribbler.url("/other.json", "127.0.0.2")))
        wait_until(lambda: dribbler.connections["127.0.0.2"] >= 1)
        anywhere = authorize(server, dribbler.url("/fourth.json", "127.0.0.3"))
        assert anywhere.status_code == 503, anywhere.text
        assert "being fetched" in anywhere.text
        assert dribbler.connections["127.0.0.3"] == 0

        assert [future.result().status_code for future in held] == [400, 400, 400]
    # the slots are given back
    assert authorize(server, dribbler.url("/after.json", "127.0.0.3")).status_code == 400
    assert dribbler.connections["127.0.0.3"] == 1


def test_a_failure_is_remembered_briefly(server: LiveServer) -> None:
    documents = MetadataServer().start()
    try:
        documents.answer = Answer(status=404)
        pages = [authorize(server, documents.client_id) for _ in range(2)]
        assert [page.status_code for page in pages] == [400, 400]
        assert all("HTTP 404" in page.text for page in pages)
        assert len(documents.requests) == 1  # the second answered from memory
    finally:
        documents.stop()


class TestPerAddressRate:
    def test_token(self, server: LiveServer) -> None:
        address, other = stranger(), stranger()
        url = f"{server.url}/token"
        form = {"grant_type": "refresh_token", "refresh_token": "x", "client_id": "mcp_x"}
        answers = [httpx.post(url, data=form, headers=address) for _ in range(RATE + 1)]
        assert [a.status_code for a in answers[:RATE]] == [400] * RATE, answers[0].text
        refused = answers[-1]
        assert refused.status_code == 429
        assert refused.json()["error"] == "temporarily_unavailable"
        assert 0 < int(refused.headers["Retry-After"]) <= 60
        assert httpx.post(url, data=form, headers=other).status_code == 400

    def test_register(self, server: LiveServer) -> None:
        address = stranger()
        url = f"{server.url}/register"
        body = {"redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "none"}
        answers = [httpx.post(url, json=body, headers=address) for _ in range(RATE + 1)]
        assert [a.status_code for a in answers[:RATE]] == [201] * RATE
        assert answers[-1].status_code == 429
        assert answers[-1].json()["error"] == "temporarily_unavailable"

    def test_authorize(self, server: LiveServer) -> None:
        address = stranger()
        answers = [authorize(server, "mcp_unknown", address) for _ in range(RATE + 1)]
        assert [a.status_code for a in answers[:RATE]] == [400] * RATE
        assert answers[-1].status_code == 429
        assert "Too many authorization requests" in answers[-1].text
        assert int(answers[-1].headers["Retry-After"]) > 0


@pytest.fixture(scope="module")
def roomy_server(
    backend: Backend, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """Slots for more fetches than the api has worker threads (40) or pooled database
    connections (30 on PostgreSQL)."""
    live = loopback_server(
        backend,
        tmp_path_factory,
        "cimd-roomy",
        GEOSVC_OAUTH_CIMD_TIMEOUT_S="8",
        GEOSVC_OAUTH_CIMD_MAX_FETCHES="64",
        GEOSVC_OAUTH_CIMD_MAX_FETCHES_PER_HOST="64",
        GEOSVC_OAUTH_CIMD_FETCH_BURST="64",
    )
    yield live
    live.stop()


def test_fetches_in_flight_hold_no_thread_or_database_connection(
    roomy_server: LiveServer, dribbler: DribblingServer
) -> None:
    """45 slow documents at once (the issue's 503s) while a signed-in person reads /me."""
    with httpx.Client(base_url=roomy_server.url, timeout=30) as person:
        sign_up(person)
        with ThreadPoolExecutor(45) as pool:
            held = [
                pool.submit(authorize, roomy_server, dribbler.url(f"/held-{n}.json"))
                for n in range(45)
            ]
            wait_until(lambda: dribbler.open_now >= 45, deadline_s=20)
            me = person.get("/me", timeout=5)  # well inside the fetches' 8 s
            assert me.status_code == 200, me.text
            assert dribbler.open_now >= 45  # they were all still waiting
            assert {future.result().status_code for future in held} == {400}
