"""Keys and the request log in a real browser, at desktop and phone widths: create a key
with an expiry, rename it and change its expiry, see an expired key; make real tool calls
(served by a real worker) and filter the request log by key and outcome."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from app.kit.clock import utcnow
from tests.dashboard.conftest import DashboardServer, Shot, create_key, look, sign_up
from tests.support.celery_worker import CeleryWorker


def day(days_ahead: int) -> str:
    return (utcnow().date() + timedelta(days=days_ahead)).isoformat()


def shown(iso_day: str) -> str:
    """How the page shows the start of that day: 24 Dec 2026, 00:00 UTC."""
    return f"{datetime.fromisoformat(iso_day):%-d %b %Y}, 00:00 UTC"


def key_id_of(plaintext: str) -> str:
    return plaintext.split("_")[3]


def test_keys_are_renamed_and_expire(page: Page, shot: Shot) -> None:
    sign_up(page, shot, "Cy")
    in_30_days, in_7_days = day(30), day(7)

    ci_id = key_id_of(create_key(page, "ci", expires_on=in_30_days))
    laptop_id = key_id_of(create_key(page, "laptop"))
    page.goto("/dashboard/keys")
    ci, laptop = (page.locator(f"tr[data-key-id='{key}']") for key in (ci_id, laptop_id))
    expect(ci.get_by_test_id("expires")).to_have_text(shown(in_30_days))
    expect(laptop.get_by_test_id("expires")).to_have_text("never")
    expect(laptop.get_by_test_id("last-used")).to_have_text("never")
    look(page, shot, "keys-expiry")

    # Rename and set an expiry in the row's own form.
    laptop.get_by_text("Edit").click()
    laptop.get_by_label("New name").fill("laptop (home)")
    laptop.get_by_label("New expiry").fill(in_7_days)
    look(page, shot, "key-edit")
    laptop.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("The key is saved")
    expect(laptop.get_by_role("cell", name="laptop (home)")).to_be_visible()
    expect(laptop.get_by_test_id("expires")).to_have_text(shown(in_7_days))

    # A bad edit keeps the form open with its error; what was typed stays.
    laptop.get_by_text("Edit").click()
    laptop.get_by_label("New name").fill("")
    laptop.get_by_role("button", name="Save").click()
    expect(laptop.locator(f"#key-{laptop_id}-name-error")).to_be_visible()
    expect(laptop.get_by_label("New name")).to_be_visible()
    look(page, shot, "key-edit-error")

    # Removing the expiry: an empty date.
    laptop.get_by_label("New name").fill("laptop")
    laptop.get_by_label("New expiry").fill("")
    laptop.get_by_role("button", name="Save").click()
    expect(laptop.get_by_test_id("expires")).to_have_text("never")

    # An expired key: marked, and its form renames it but offers no new expiry.
    soon = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
    old = page.request.post("/api-keys", data={"name": "old", "expiresAt": soon}).json()
    old_row = page.locator(f"tr[data-key-id='{old['key']['keyId']}']")
    deadline = time.monotonic() + 10
    while not old_row.get_by_text("expired").count():
        assert time.monotonic() < deadline, "the key never showed as expired"
        time.sleep(0.2)  # polling interval: the key expires in a second
        page.reload()
    old_row.get_by_text("Edit").click()
    expect(old_row.get_by_text("cannot be extended")).to_be_visible()
    expect(old_row.get_by_label("New expiry")).to_have_count(0)
    look(page, shot, "keys-expired")

    # A page that does not exist keeps the navigation of a signed-in person.
    assert page.goto("/dashboard/kyes").status == 404  # type: ignore[union-attr]
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    page.get_by_role("navigation").get_by_role("link", name="API keys").click()
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()


def mcp_call(url: str, plaintext: str, tool: str, arguments: dict[str, Any]) -> str:
    """One tools/call over /mcp; the outcome code ("OK" for data)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    headers = {
        "Authorization": f"Bearer {plaintext}",
        "Accept": "application/json, text/event-stream",
    }
    result = httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=30).json()["result"]
    return str(result["structuredContent"].get("error", {}).get("code", "OK"))


def test_the_request_log_filters_by_key_and_outcome(
    page: Page, dashboard_server: DashboardServer, dashboard_worker: CeleryWorker, shot: Shot
) -> None:
    sign_up(page, shot, "Di")
    agent, backup = create_key(page, "agent"), create_key(page, "backup")
    url = dashboard_server.url
    outcomes = [
        mcp_call(url, agent, "geocode", {"query": "Austin, TX", "limit": 1}),
        mcp_call(url, agent, "get_population", {"postal_code": "10001"}),
        mcp_call(url, agent, "get_population", {"postal_code": "00000"}),
        mcp_call(url, backup, "get_population", {"postal_code": "1"}),
    ]
    assert outcomes == ["OK", "OK", "NOT_FOUND", "INVALID_ARGUMENT"]
    deadline = time.monotonic() + 10
    while len(page.request.get("/usage/calls").json()["calls"]) < 4:
        assert time.monotonic() < deadline, "the calls never reached the log"
        time.sleep(0.05)

    page.goto("/")
    page.get_by_role("navigation").get_by_role("link", name="Request log").click()
    rows = page.get_by_test_id("calls").locator("tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.nth(0)).to_contain_text("INVALID_ARGUMENT")
    expect(rows.nth(0)).to_contain_text("backup")
    expect(rows.nth(3)).to_contain_text("geocode")
    expect(rows.nth(3)).to_contain_text("agent")
    look(page, shot, "calls")

    page.get_by_label("Key").select_option(label="backup")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("INVALID_ARGUMENT")
    expect(page.get_by_label("Key")).to_have_value(key_id_of(backup))

    page.get_by_label("Key").select_option(label="All keys and apps")
    page.get_by_label("Outcome").select_option(label="Failed (any error)")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(2)
    expect(page.locator("tbody tr[data-outcome=OK]")).to_have_count(0)
    look(page, shot, "calls-failed")

    page.get_by_label("Outcome").select_option(label="OK")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(2)
    for n in range(2):
        expect(rows.nth(n).get_by_role("cell").nth(-2)).to_have_text("1")  # one credit each

    page.get_by_label("Key").select_option(label="backup")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_test_id("no-calls")).to_have_text("No calls match these filters.")
    page.get_by_role("link", name="Clear").click()
    expect(rows).to_have_count(4)
    look(page, shot, "calls-all")


def test_the_request_log_shows_each_calls_id_and_surface(
    page: Page, dashboard_server: DashboardServer, dashboard_worker: CeleryWorker, shot: Shot
) -> None:
    sign_up(page, shot, "Ed")
    key = create_key(page, "production agent (eu-west)")
    url, auth = dashboard_server.url, {"Authorization": f"Bearer {key}"}
    assert mcp_call(url, key, "get_average_income", {"postal_code": "10001"}) == "OK"
    v1 = httpx.get(f"{url}/v1/population", params={"postal_code": "10001"}, headers=auth)
    assert v1.status_code == 200, v1.text
    refused = httpx.get(f"{url}/v1/population", params={"postal_code": "1"}, headers=auth)
    assert refused.status_code == 400
    deadline = time.monotonic() + 10
    while len(logged := page.request.get("/usage/calls").json()["calls"]) < 3:
        assert time.monotonic() < deadline, "the calls never reached the log"
        time.sleep(0.05)

    page.goto("/dashboard/calls")
    rows = page.get_by_test_id("calls").locator("tbody tr")
    expect(rows).to_have_count(3)
    # Newest first: the refusal (no id), the /v1 call, the MCP call; ids as in the JSON.
    assert [call["surface"] for call in logged] == ["v1", "v1", "mcp"]
    expect(page.get_by_test_id("surface")).to_have_text(["HTTP /v1", "HTTP /v1", "MCP"])
    assert logged[0]["callId"] is None
    expect(page.get_by_test_id("call-id")).to_have_text(
        ["none", logged[1]["callId"], logged[2]["callId"]]
    )
    look(page, shot, "calls-ids")
