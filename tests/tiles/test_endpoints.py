"""GET /v1/tiles/{z}/{x}/{y}.png through a real server and a real tools worker (issue 53,
items 1 and 5): tiles drawn from the static maps' basemap, cacheable by anyone, for a key
or a signed URL from a map call; free within a per-account and a per-address budget;
bad input answered in the envelope. Each test fetches from a loopback address of its own
(the connection's source, as the address budget counts it)."""

from __future__ import annotations

import io
import secrets
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from PIL import Image

from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Account, Stack, connect, mcp_env, running_stack
from tests.support.factories import sign_up
from tests.support.fixtures import Backend, PerBackend

PER_ACCOUNT = 40
PER_ADDRESS = 30
WINDOW_S = 600  # longer than the test: no window ends in the middle of it
TILES_META = "geosvc/tiles"
NYC_Z10 = (10, 301, 385)  # New York City


@pytest.fixture(scope="module")
def tile_stack(
    backend: Backend,
    fake_upstream: FakeUpstream,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Stack:
    name = f"tiles-{backend.name}"
    env = {
        **mcp_env(backend, fake_upstream, f"tiles-{secrets.token_hex(3)}"),
        "GEOSVC_TILE_FETCHES_PER_ACCOUNT": str(PER_ACCOUNT),
        "GEOSVC_TILE_FETCHES_PER_IP": str(PER_ADDRESS),
        "GEOSVC_TILE_FETCH_WINDOW_S": str(WINDOW_S),
    }
    return per_backend.get(name, lambda: running_stack(env, tmp_path_factory.mktemp(name)))


@pytest.fixture
def owner(tile_stack: Stack) -> Iterator[Account]:
    with httpx.Client(base_url=tile_stack.server.url, timeout=30) as http:
        user_id = str(sign_up(http)["userId"])
        created = http.post("/api-keys", json={"name": "agent"}).json()
        yield Account(user_id, created["plaintext"], created["key"]["keyId"], http)


def fresh_address() -> str:
    second, third = secrets.token_bytes(2)
    return f"127.{second}.{third}.{secrets.randbelow(250) + 2}"


def get_from(
    address: str, url: str, key: str | None = None, headers: dict[str, str] | None = None
) -> httpx.Response:
    sent = {**(headers or {}), **({"Authorization": f"Bearer {key}"} if key else {})}
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(transport=transport, timeout=30) as http:
        return http.get(url, headers=sent)


def tile_url(stack: Stack, z: int, x: int, y: int) -> str:
    return f"{stack.server.url}/v1/tiles/{z}/{x}/{y}.png"


async def granted_template(stack: Stack, account: Account) -> str:
    """The signed tile URL template a map call's result carries in its _meta."""
    async with connect(stack.mcp_url, account.api_key) as client:
        drawn = await client.call_tool("geocode", {"query": "Denver", "limit": 1})
    assert not drawn.is_error
    grant = drawn.meta[TILES_META]
    assert grant["maxZoom"] == 12
    assert grant["expiresAt"] > time.time() + 60
    return str(grant["urlTemplate"])


def assert_error(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert response.headers["cache-control"] == "no-store"
    return dict(error)


class TestTile:
    def test_key_gets_a_cacheable_basemap_tile(self, tile_stack: Stack, owner: Account) -> None:
        response = get_from(fresh_address(), tile_url(tile_stack, *NYC_Z10), owner.api_key)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "image/png"
        assert "public" in response.headers["cache-control"]
        assert "max-age=86400" in response.headers["cache-control"]
        image = Image.open(io.BytesIO(response.content)).convert("RGB")
        assert image.size == (256, 256)
        colours = {colour for _count, colour in image.getcolors(65536) or []}
        assert (170, 211, 223) in colours  # the sea of New York harbour
        assert (242, 239, 233) in colours  # and its land, as static_map draws them

    def test_etag_answers_304_without_the_tile(self, tile_stack: Stack, owner: Account) -> None:
        address = fresh_address()
        url = tile_url(tile_stack, 10, 302, 385)
        first = get_from(address, url, owner.api_key)
        etag = first.headers["etag"]
        again = get_from(address, url, owner.api_key, {"If-None-Match": etag})
        assert again.status_code == 304
        assert again.content == b""
        assert again.headers["etag"] == etag
        other = get_from(address, tile_url(tile_stack, 10, 303, 385), owner.api_key)
        assert other.headers["etag"] != etag

    def test_neighbours_come_from_the_same_drawing(self, tile_stack: Stack, owner: Account) -> None:
        """A metatile's tiles are cached together: the same bytes however often asked."""
        address = fresh_address()
        first = get_from(address, tile_url(tile_stack, 8, 75, 96), owner.api_key)
        second = get_from(address, tile_url(tile_stack, 8, 75, 96), owner.api_key)
        assert first.status_code == second.status_code == 200
        assert first.content == second.content


class TestSignedUrl:
    async def test_template_from_a_map_call_fetches_without_a_key(
        self, tile_stack: Stack, owner: Account
    ) -> None:
        template = await granted_template(tile_stack, owner)
        assert template.startswith(f"{tile_stack.server.url}/v1/tiles/{{z}}/{{x}}/{{y}}.png?")
        z, x, y = NYC_Z10
        url = template.replace("{z}", str(z)).replace("{x}", str(x)).replace("{y}", str(y))
        response = get_from(fresh_address(), url)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "image/png"

    async def test_changed_signature_or_account_is_403(
        self, tile_stack: Stack, owner: Account
    ) -> None:
        template = await granted_template(tile_stack, owner)
        url = template.replace("{z}", "3").replace("{x}", "2").replace("{y}", "3")
        query = parse_qs(urlsplit(url).query)
        signature = query["signature"][0]
        forged = url.replace(signature, ("0" if signature[0] != "0" else "1") + signature[1:])
        assert_error(get_from(fresh_address(), forged), 403, "FORBIDDEN")
        other = url.replace(owner.user_id, "usr_" + "a" * 20)
        assert_error(get_from(fresh_address(), other), 403, "FORBIDDEN")
        later = url.replace(query["expires"][0], str(int(query["expires"][0]) + 3600))
        assert_error(get_from(fresh_address(), later), 403, "FORBIDDEN")

    def test_no_key_and_no_signature_is_401(self, tile_stack: Stack) -> None:
        response = get_from(fresh_address(), tile_url(tile_stack, 1, 0, 0))
        assert_error(response, 401, "UNAUTHENTICATED")


class TestBadInput:
    @pytest.mark.parametrize(
        ("path", "status", "code"),
        [
            ("3/8/0", 400, "INVALID_ARGUMENT"),  # x past the world's 8 tiles at zoom 3
            ("3/0/8", 400, "INVALID_ARGUMENT"),
            ("0/0/-1", 400, "INVALID_ARGUMENT"),
            ("a/0/0", 400, "INVALID_ARGUMENT"),
            ("13/0/0", 404, "NOT_FOUND"),  # past the basemap's detail
            ("99999999/0/0", 400, "INVALID_ARGUMENT"),
        ],
    )
    def test_outside_the_world_or_past_the_data(
        self, tile_stack: Stack, owner: Account, path: str, status: int, code: str
    ) -> None:
        url = f"{tile_stack.server.url}/v1/tiles/{path}.png"
        assert_error(get_from(fresh_address(), url, owner.api_key), status, code)


class TestBudgets:
    def test_account_budget_is_429_with_retry_after(
        self, tile_stack: Stack, owner: Account
    ) -> None:
        url = tile_url(tile_stack, 2, 1, 1)
        for _ in range(PER_ACCOUNT):  # spread over addresses: only the account's budget ends
            assert get_from(fresh_address(), url, owner.api_key).status_code == 200
        error = assert_error(get_from(fresh_address(), url, owner.api_key), 429, "RATE_LIMITED")
        assert "account" in error["message"]
        refused = get_from(fresh_address(), url, owner.api_key)
        assert 0 < int(refused.headers["Retry-After"]) <= WINDOW_S

    def test_address_budget_counts_every_request(self, tile_stack: Stack) -> None:
        address = fresh_address()
        url = tile_url(tile_stack, 1, 0, 0)
        for _ in range(PER_ADDRESS):  # refused ones too: guessing signatures costs
            assert get_from(address, url).status_code == 401
        error = assert_error(get_from(address, url), 429, "RATE_LIMITED")
        assert "address" in error["message"]
        assert 0 < int(get_from(address, url).headers["Retry-After"]) <= WINDOW_S
