"""deploy/nginx.conf finds the api by name at run time (issue 38, item 7): two api
replicas behind one nginx both serve, and a replica replaced by one at a new address is
found without reloading nginx, as with `docker compose up --scale api=2` and a recreated
container. Docker's DNS is played by tests/fakes/dns.py on 127.0.0.1 (the machine's
resolver is never asked); the replicas are real api processes on 127.0.0.2 and 127.0.0.3."""

from __future__ import annotations

import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from app.kit.embedded_redis import free_port
from tests.fakes.dns import FakeDns
from tests.support.fixtures import Backend
from tests.support.live_server import LiveServer, launch_live_server, wait_until_healthy
from tests.support.services import migrate
from tests.test_proxy import Proxy, local_config, require_nginx, running_nginx, self_signed

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
REPLICA_ADDRESSES = ("127.0.0.2", "127.0.0.3")


def served_by(proxy: Proxy) -> str | None:
    """Which replica answered: each has its own base URL, which its resource metadata names."""
    try:
        response = httpx.get(
            f"{proxy.https_url}/.well-known/oauth-protected-resource", verify=False, timeout=5
        )
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    return str(response.json()["resource"]).split("//", 1)[1].split(":", 1)[0]


def replicas_seen(proxy: Proxy, expected: set[str], deadline_s: float = 30.0) -> set[str]:
    """Ask through the proxy until every expected replica has answered (or the deadline)."""
    seen: set[str] = set()
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline and not expected <= seen:
        replica = served_by(proxy)
        if replica is not None:
            seen.add(replica)
    return seen


def start_replica(env: dict[str, str], host: str, port: int, directory: Path) -> LiveServer:
    server = launch_live_server(env, directory / f"api-{host}.log", host=host, port=port)
    return wait_until_healthy(server, 60)


class TestApiFoundByName:
    def test_two_replicas_both_serve_and_a_replaced_one_is_found(
        self, backend: Backend, tmp_path: Path
    ) -> None:
        require_nginx()
        env = backend.env()
        migrate(env)
        api_port, http_port, https_port = free_port(), free_port(), free_port()
        self_signed(tmp_path)
        first, second = REPLICA_ADDRESSES
        with FakeDns() as dns, ExitStack() as running:
            dns.answer("api", [first])
            replica = {first: start_replica(env, first, api_port, tmp_path)}
            running.callback(lambda: [server.stop() for server in replica.values()])
            config = local_config(f"api:{api_port}", http_port, https_port, tmp_path, dns.address)
            proxy = running.enter_context(running_nginx(config, tmp_path, http_port, https_port))
            assert replicas_seen(proxy, {first}) == {first}

            # `--scale api=2`: a second replica joins; the name now has both addresses.
            replica[second] = start_replica(env, second, api_port, tmp_path)
            dns.answer("api", [first, second])
            assert replicas_seen(proxy, {first, second}) == {first, second}

            # The first goes (a recreated container comes back at another address): once
            # the name no longer has it, every request reaches the one that is there.
            replica.pop(first).stop()
            dns.answer("api", [second])
            # each nginx worker process resolves the name on its own: wait until answers
            # in a row have all come from the one left, not just the first
            deadline, in_a_row = time.monotonic() + 30, 0
            while in_a_row < 10 and time.monotonic() < deadline:
                in_a_row = in_a_row + 1 if served_by(proxy) == second else 0
            assert [served_by(proxy) for _ in range(20)] == [second] * 20
            assert dns.queries > 0  # nginx asked our DNS, not the machine's resolver
