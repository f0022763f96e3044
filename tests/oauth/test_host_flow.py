"""An MCP host connecting through OAuth, end to end, as hosts that only take a URL do:
401 -> protected resource metadata -> authorization server metadata -> registration ->
sign-in and consent in a real browser (Debian's chromium, Playwright) -> code exchange
-> tools/call with the access token through the official `mcp` client -> refresh ->
revoke -> refused. Then the person's side: the Connected apps page, the usage page
naming the app, and disconnecting it there."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import Browser, Dialog, Page, expect

from tests.dashboard.conftest import browser  # noqa: F401  # the shared chromium
from tests.fakes.oauth_host import CallbackServer
from tests.mcp.conftest import Stack, start_stack
from tests.oauth.conftest import Host, call_mcp, challenge_of, refused_within
from tests.support.factories import PASSWORD, sign_up, unique_email
from tests.support.fixtures import Backend
from tests.support.live_server import TEST_RUN_PREFIX


@pytest.fixture(scope="module")
def stack(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """An api server and a worker: tools/call needs both."""
    env = backend.env(GEOSVC_REDIS_KEY_PREFIX=f"{TEST_RUN_PREFIX}oauth-{backend.name}:")
    running = start_stack(env, tmp_path_factory.mktemp(f"oauth-{backend.name}"))
    yield running
    running.server.stop()
    running.worker.stop(wait=False)


@pytest.fixture
def page(browser: Browser, stack: Stack) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context(base_url=stack.server.url)
    context.set_default_timeout(10_000)
    yield context.new_page()
    context.close()


def call_tool(mcp_url: str, access_token: str) -> Any:
    """tools/call through the official client, on a thread of its own (Playwright's sync
    API holds this thread's event loop)."""

    async def run() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {access_token}"})
        async with http, Client(streamable_http_client(mcp_url, http_client=http)) as client:
            return await client.call_tool("get_population", {"postal_code": "94103"})

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, run).result(timeout=60)


def sign_in_and_approve(page: Page, host: Host, email: str) -> None:
    """The person's part: the authorization URL opens the sign-in page (signed out), then
    the consent page; approving sends the browser to the host's redirect URI."""
    page.goto(host.authorization_url())
    expect(page.get_by_test_id("oauth-pending")).to_be_visible()
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_test_id("client-name")).to_contain_text("Example Host")
    expect(page.get_by_test_id("redirect-host")).to_have_text(
        host.redirect_uri.split("/")[2]  # 127.0.0.1:<port>
    )
    expect(page.get_by_test_id("loopback-warning")).to_be_visible()
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url(host.redirect_uri + "?*")


def approved_query(callback: CallbackServer) -> dict[str, str]:
    assert callback.arrived.wait(10)
    return callback.last_query()


def poll(read: Any, until: Any, deadline_s: float = 15.0) -> Any:
    deadline = time.monotonic() + deadline_s
    while True:
        value = read()
        if until(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def new_person(stack: Stack) -> tuple[str, httpx.Client]:
    email = unique_email("oauth")
    http = httpx.Client(base_url=stack.server.url, timeout=30)
    sign_up(http, email=email)
    return email, http


def test_a_host_connects_calls_refreshes_and_is_revoked(
    page: Page, stack: Stack, callback: CallbackServer
) -> None:
    email, person = new_person(stack)
    host = Host(stack.server.url, callback.redirect_uri)
    host.discover()  # 401 -> resource metadata -> authorization server metadata
    assert host.register(client_name="Example Host").status_code == 201

    sign_in_and_approve(page, host, email)
    answer = approved_query(callback)
    assert answer["state"] == host.state
    assert answer["iss"] == host.metadata["issuer"]  # RFC 9207
    exchanged = host.exchange(answer["code"])
    assert exchanged.status_code == 200, exchanged.text
    tokens = exchanged.json()
    assert tokens["token_type"] == "Bearer"
    assert tokens["scope"] == "read:data"

    result = call_tool(stack.mcp_url, tokens["access_token"])
    assert not result.is_error, result.content
    assert result.structured_content["population"] > 0
    assert person.get("/usage").json()["used"] == 1  # metered like a key

    refreshed = host.refresh(tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    rotated = refreshed.json()
    assert rotated["refresh_token"] != tokens["refresh_token"]
    assert not call_tool(stack.mcp_url, rotated["access_token"]).is_error
    assert person.get("/usage").json()["used"] == 2

    assert host.revoke(rotated["refresh_token"]).status_code == 200

    refused = refused_within(stack.server.url, f"Bearer {rotated['access_token']}")
    assert refused.status_code == 401
    assert challenge_of(refused)["error"] == "invalid_token"
    assert "revoked" in refused.json()["error"]["message"]
    assert call_mcp(stack.server.url, f"Bearer {tokens['access_token']}").status_code == 401
    assert person.get("/usage").json()["used"] == 2  # refusals cost nothing
    person.close()


def test_the_person_sees_the_app_and_disconnects_it(
    page: Page, stack: Stack, callback: CallbackServer
) -> None:
    email, person = new_person(stack)
    host = Host(stack.server.url, callback.redirect_uri)
    host.discover()
    assert host.register(client_name="Example Host").status_code == 201
    sign_in_and_approve(page, host, email)
    tokens = host.exchange(approved_query(callback)["code"]).json()
    assert not call_tool(stack.mcp_url, tokens["access_token"]).is_error

    def apps_row() -> str:
        page.goto("/dashboard/apps")
        return page.get_by_test_id("apps").inner_text()

    row = poll(apps_row, lambda text: "never" not in text)  # the ledger catches up
    assert "Example Host" in row
    assert callback.redirect_uri.split("/")[2] in row
    assert "never" not in row  # last used: the call above
    page.goto("/dashboard/usage")
    expect(page.get_by_test_id("by-key")).to_contain_text("Example Host")
    expect(page.get_by_test_id("by-key")).to_contain_text("app")

    page.goto("/dashboard/apps")
    questions: list[str] = []

    def accept(dialog: Dialog) -> None:
        questions.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.get_by_role("button", name="Disconnect").click()
    expect(page.get_by_role("status")).to_contain_text("disconnected")
    expect(page.get_by_test_id("no-apps")).to_be_visible()
    assert "Example Host" in questions[0]

    refused = refused_within(stack.server.url, f"Bearer {tokens['access_token']}")
    assert refused.status_code == 401
    assert host.refresh(tokens["refresh_token"]).status_code == 400
    person.close()
