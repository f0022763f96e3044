"""A map link is free to fetch, so its fetches are budgeted (issue 51, item 4): per link
in its life and per client address per window, in Redis, refused 429 in the envelope with
Retry-After; and no answer of the route may be kept by a cache. Through the real server
and worker: the link comes from a real MCP static_map; each client address is a loopback
address of its own (the connection's source, not a header)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Account, Stack, connect, mcp_env, running_stack
from tests.mcp.test_host_view import BIG_MAP
from tests.support.factories import sign_up
from tests.support.fixtures import Backend, PerBackend

PER_LINK = 4
PER_ADDRESS = 6
WINDOW_S = 600  # longer than the test: no window ends in the middle of it
NO_STORE = "private, no-store"
LINK_LIFE_S = 900  # GEOSVC_MAP_LINK_TTL_S's default: a spent link waits for its end


@pytest.fixture(scope="module")
def budget_stack(
    backend: Backend,
    fake_upstream: FakeUpstream,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Stack:
    name = f"maplinks-{backend.name}"
    env = {
        **mcp_env(backend, fake_upstream, f"maplinks-{secrets.token_hex(3)}"),
        "GEOSVC_MAP_LINK_FETCHES_PER_LINK": str(PER_LINK),
        "GEOSVC_MAP_LINK_FETCHES_PER_IP": str(PER_ADDRESS),
        "GEOSVC_MAP_LINK_FETCH_WINDOW_S": str(WINDOW_S),
    }
    return per_backend.get(name, lambda: running_stack(env, tmp_path_factory.mktemp(name)))


@pytest.fixture
def owner(budget_stack: Stack) -> Iterator[Account]:
    with httpx.Client(base_url=budget_stack.server.url, timeout=30) as http:
        user_id = str(sign_up(http)["userId"])
        created = http.post("/api-keys", json={"name": "agent"}).json()
        yield Account(user_id, created["plaintext"], created["key"]["keyId"], http)


async def big_map_link(stack: Stack, account: Account) -> str:
    async with connect(stack.mcp_url, account.api_key) as client:
        drawn = await client.call_tool("static_map", BIG_MAP)
    assert [block.type for block in drawn.content] == ["text", "resource_link"]
    return str(drawn.content[1].uri)


def fresh_address() -> str:
    """A loopback address no other test (or run) of this module uses."""
    second, third = secrets.token_bytes(2)
    return f"127.{second}.{third}.{secrets.randbelow(250) + 2}"


def get_from(address: str, url: str, key: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(transport=transport, timeout=30) as http:
        return http.get(url, headers=headers)


def assert_refused(response: httpx.Response, said: str, longest_wait_s: int) -> None:
    assert response.status_code == 429, response.text
    error = response.json()["error"]
    assert error["code"] == "RATE_LIMITED"
    assert said in error["message"]
    assert 0 < int(response.headers["Retry-After"]) <= longest_wait_s
    assert response.headers["cache-control"] == NO_STORE


class TestPerLink:
    async def test_a_link_answers_its_budget_then_429_from_any_address_or_key(
        self, budget_stack: Stack, owner: Account
    ) -> None:
        link = await big_map_link(budget_stack, owner)
        answered = [get_from(fresh_address(), link) for _ in range(PER_LINK)]
        assert [r.status_code for r in answered] == [200] * PER_LINK
        assert all(r.headers["cache-control"] == NO_STORE for r in answered)

        assert_refused(get_from(fresh_address(), link), "fetched 4 times", LINK_LIFE_S)
        bare = link.split("?")[0]  # the owner's own key draws on the same budget
        assert_refused(
            get_from(fresh_address(), bare, owner.api_key), "fetched 4 times", LINK_LIFE_S
        )

        other = await big_map_link(budget_stack, owner)  # a new link has its own
        assert get_from(fresh_address(), other).status_code == 200

    async def test_a_forged_signature_spends_nothing_of_the_link(
        self, budget_stack: Stack, owner: Account
    ) -> None:
        link = await big_map_link(budget_stack, owner)
        signature = link.rsplit("signature=", 1)[1]
        forged = link.replace(signature, "0" * 64)
        for _ in range(PER_LINK + 1):
            assert get_from(fresh_address(), forged).status_code == 404
        assert get_from(fresh_address(), link).status_code == 200


class TestPerAddress:
    async def test_an_address_is_refused_after_its_budget_whatever_it_asks(
        self, budget_stack: Stack, owner: Account
    ) -> None:
        links = [await big_map_link(budget_stack, owner) for _ in range(2)]
        address = fresh_address()
        query = links[0].split("?", 1)[1]  # a signature, but for another image
        missing = (
            f"{budget_stack.server.url}/v1/static-map/images/{secrets.token_urlsafe(16)}?{query}"
        )
        answers = [get_from(address, links[0]) for _ in range(2)]
        answers += [get_from(address, missing) for _ in range(PER_ADDRESS - 2)]
        assert [r.status_code for r in answers] == [200] * 2 + [404] * (PER_ADDRESS - 2)

        assert_refused(
            get_from(address, links[1]), "from your address", WINDOW_S
        )  # a 404 counted too
        assert_refused(get_from(address, links[1].split("?")[0]), "from your address", WINDOW_S)
        assert get_from(fresh_address(), links[1]).status_code == 200  # others still fetch


class TestCacheHeaders:
    async def test_every_answer_of_the_route_says_no_store(
        self, budget_stack: Stack, owner: Account
    ) -> None:
        link = await big_map_link(budget_stack, owner)
        bare = link.split("?")[0]
        answers = {
            "signed": get_from(fresh_address(), link),
            "owner": get_from(fresh_address(), bare, owner.api_key),
            "no key": get_from(fresh_address(), bare),
            "bad key": get_from(fresh_address(), bare, "svc_live_ak_" + "x" * 40),
            "forged": get_from(fresh_address(), link.replace("signature=", "signature=0")),
            "missing": get_from(fresh_address(), bare + "x", owner.api_key),
            "bad id": get_from(fresh_address(), bare.rsplit("/", 1)[0] + "/%21", owner.api_key),
        }
        statuses = {name: response.status_code for name, response in answers.items()}
        assert statuses == {
            "signed": 200,
            "owner": 200,
            "no key": 401,
            "bad key": 401,
            "forged": 404,
            "missing": 404,
            "bad id": 404,
        }
        for name, response in answers.items():
            assert response.headers.get("cache-control") == NO_STORE, name
            if response.status_code != 200:
                assert set(response.json()["error"]) >= {"code", "message"}, name
