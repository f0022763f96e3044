"""Issue 57, item 2: the playground's run, as an attacker would try it. A real server and
worker (the dashboard's), plain HTTP with the session cookie: only the signed-in
account's own active keys run, only from the dashboard's own origin, and each run is the
metered call (`call_tool`) with the key's limits and counter."""

from __future__ import annotations

import html
from collections.abc import Iterator

import httpx
import pytest

from tests.dashboard.conftest import DashboardServer
from tests.support.celery_worker import CeleryWorker
from tests.support.factories import sign_up

RUN = "/dashboard/playground/get_population"


@pytest.fixture
def clients(dashboard_server: DashboardServer) -> Iterator[list[httpx.Client]]:
    made: list[httpx.Client] = []
    yield made
    for client in made:
        client.close()


def account(server: DashboardServer, clients: list[httpx.Client]) -> tuple[httpx.Client, str]:
    """A signed-in client and the id of its test key."""
    client = httpx.Client(base_url=server.url, timeout=30)
    clients.append(client)
    sign_up(client)
    key = client.post("/api-keys", json={"name": "ci", "env": "test"}).json()
    return client, str(key["key"]["keyId"])


def run(client: httpx.Client, key_id: str, postal_code: str = "10001") -> httpx.Response:
    return client.post(RUN, data={"key_id": key_id, "arg.postal_code": postal_code})


def shown(page: httpx.Response) -> str:
    """The page's text as the browser shows it (the answer is HTML-escaped in it)."""
    return html.unescape(page.text)


def calls_of(client: httpx.Client) -> list[dict[str, object]]:
    return list(client.get("/usage/calls").json()["calls"])


class TestWhoCanRun:
    def test_the_own_test_key_runs_the_metered_call(
        self,
        dashboard_server: DashboardServer,
        dashboard_worker: CeleryWorker,
        clients: list[httpx.Client],
    ) -> None:
        client, key_id = account(dashboard_server, clients)

        page = run(client, key_id)

        assert page.status_code == 200
        assert '"postalCode":"10001"' in shown(page)
        logged = calls_of(client)
        assert [(c["tool"], c["outcome"], c["surface"]) for c in logged] == [
            ("get_population", "OK", "playground")
        ]
        assert logged[0]["principal"]["id"] == key_id  # type: ignore[index]
        assert client.get("/usage").json()["used"] == 0  # the test counter, not live

    def test_another_accounts_key_is_refused_and_nothing_runs(
        self,
        dashboard_server: DashboardServer,
        dashboard_worker: CeleryWorker,
        clients: list[httpx.Client],
    ) -> None:
        mine, _ = account(dashboard_server, clients)
        theirs, their_key = account(dashboard_server, clients)

        page = run(mine, their_key)

        assert '"code":"UNAUTHENTICATED"' in shown(page)
        assert '"postalCode"' not in shown(page)
        assert calls_of(mine) == []
        assert calls_of(theirs) == []

    def test_a_revoked_or_made_up_key_is_refused(
        self,
        dashboard_server: DashboardServer,
        dashboard_worker: CeleryWorker,
        clients: list[httpx.Client],
    ) -> None:
        client, key_id = account(dashboard_server, clients)
        assert client.delete(f"/api-keys/{key_id}").status_code == 204

        for key in (key_id, "nosuchkey1", "../../x", "a" * 200):
            page = run(client, key)
            assert '"code":"UNAUTHENTICATED"' in shown(page), key
        assert calls_of(client) == []

    def test_a_form_on_another_site_cannot_run_it(
        self,
        dashboard_server: DashboardServer,
        dashboard_worker: CeleryWorker,
        clients: list[httpx.Client],
    ) -> None:
        client, key_id = account(dashboard_server, clients)

        refused = client.post(
            RUN,
            data={"key_id": key_id, "arg.postal_code": "10001"},
            headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
        )

        assert refused.status_code == 403
        assert calls_of(client) == []

    def test_signed_out_it_asks_to_sign_in(self, dashboard_server: DashboardServer) -> None:
        with httpx.Client(base_url=dashboard_server.url) as anonymous:
            for answer in (anonymous.get(RUN), run(anonymous, "whatever1")):
                assert answer.status_code == 303
                assert answer.headers["location"] == "/dashboard/signin"

    def test_an_unknown_tool_is_404(
        self, dashboard_server: DashboardServer, clients: list[httpx.Client]
    ) -> None:
        client, _ = account(dashboard_server, clients)

        assert client.get("/dashboard/playground/nope").status_code == 404
