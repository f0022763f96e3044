"""A connected app's calls in the request log: under the app's name, as `oauth_app`, and
the request log page offers the app in its filter."""

from __future__ import annotations

import time
from typing import Any

import httpx

from tests.oauth.conftest import Host, call_mcp, tokens_for
from tests.support.live_server import LiveServer

INVALID_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "get_population", "arguments": {"postal_code": "1"}},
}


def test_an_apps_calls_are_logged_under_its_name(
    host: Host, person: httpx.Client, live_server: LiveServer
) -> None:
    token = tokens_for(host, person)["access_token"]

    answer = call_mcp(live_server.url, f"Bearer {token}", INVALID_CALL)

    assert answer.status_code == 200
    deadline = time.monotonic() + 10
    calls: list[dict[str, Any]] = []
    while not calls:
        assert time.monotonic() < deadline, "the call never reached the log"
        calls = person.get("/usage/calls").json()["calls"]
        time.sleep(0.05)  # polling interval: the refusal is written after its answer
    (call,) = calls
    assert call["outcome"] == "INVALID_ARGUMENT"
    principal = call["principal"]
    assert (principal["type"], principal["label"], principal["revoked"]) == (
        "oauth_app",
        "Test Host",
        False,
    )
    assert principal["id"].startswith("app_")
    only_the_app = person.get("/usage/calls", params={"principal": principal["id"]})
    assert only_the_app.json()["matched"] == 1
    page = person.get("/dashboard/calls").text
    assert f'<option value="{principal["id"]}">app: Test Host</option>' in page
