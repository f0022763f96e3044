"""Issue 57, item 2: the playground in a real browser at desktop and phone widths. Runs
tools with a test key (the default) and a live key through a real worker, sees the answer
as text and JSON and a map's image, copies a snippet and runs it, and never shows a
key's secret."""

from __future__ import annotations

import json
import os
import subprocess

from playwright.sync_api import Page, expect

from tests.dashboard.conftest import DashboardServer, Shot, create_key, look, sign_up
from tests.support.celery_worker import CeleryWorker


def test_the_playground_runs_tools_and_shows_the_call_as_code(
    page: Page, dashboard_server: DashboardServer, dashboard_worker: CeleryWorker, shot: Shot
) -> None:
    sign_up(page, shot, "Flo")
    live = create_key(page, "prod")
    test = page.request.post("/api-keys", data={"name": "ci", "env": "test"}).json()
    test_key, test_id = test["plaintext"], test["key"]["keyId"]

    page.get_by_role("navigation").get_by_role("link", name="Playground").click()
    expect(page.get_by_role("heading", name="Playground")).to_be_visible()
    expect(page.get_by_label("Key")).to_have_value(test_id)  # a test key by default
    expect(page.get_by_test_id("metering-note")).to_contain_text("costs 1 credit")
    look(page, shot, "playground")

    # get_population, the first tool, prefilled with its example: run it for 10001.
    page.get_by_label("postal_code").fill("10001")
    page.get_by_role("button", name="Run").click()
    text = page.get_by_test_id("result-text")
    expect(text).to_contain_text('"postalCode":"10001"')
    answer = json.loads(page.get_by_test_id("result-json").inner_text())
    assert answer["postalCode"] == "10001"
    assert answer["population"] > 0
    summary, compact = text.inner_text().split("\n", 1)
    assert json.loads(compact) == answer
    assert "10001" in summary
    expect(page.get_by_test_id("result")).to_contain_text("1 credit charged on the test counter")
    assert page.request.get("/usage").json()["used"] == 0  # a test key: live usage untouched
    look(page, shot, "playground-answer")

    # Copy the curl command and run it with the key in the environment: the same answer.
    page.get_by_role("button", name="Copy command").click()
    expect(page.locator("#snippet-curl-status")).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("curl")
    assert "postal_code=10001" in copied
    ran = subprocess.run(
        ["bash", "-c", copied],
        env={**os.environ, "GEOSVC_API_KEY": test_key},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert json.loads(ran.stdout) == answer

    # The page never holds a secret: not the test key's, nor the live one's.
    for secret in (test_key, live):
        assert secret.rsplit("_", 1)[1] not in page.content()

    # A bad argument: the error envelope as a client gets it, free.
    page.get_by_label("postal_code").fill("1")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_test_id("result-text")).to_contain_text('"code":"INVALID_ARGUMENT"')
    expect(page.get_by_test_id("result")).to_contain_text("0 credits charged")

    # A live key's run is metered as any call.
    page.get_by_label("Key").select_option(label=f"prod (live, {live.split('_')[3]})")
    page.get_by_label("postal_code").fill("10001")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_test_id("result")).to_contain_text("1 credit charged on the live counter")
    assert page.request.get("/usage").json()["used"] == 1

    # static_map: the map itself, beside its JSON.
    page.get_by_test_id("tools").get_by_role("link", name="static_map").click()
    page.get_by_role("button", name="Run").click()
    preview = page.get_by_test_id("map")
    expect(preview).to_be_visible()
    assert preview.evaluate("image => image.naturalWidth") > 0
    expect(page.get_by_test_id("result-json")).to_contain_text('"zoom"')
    expect(page.get_by_test_id("snippets")).to_contain_text("-o map.png")
    look(page, shot, "playground-map")

    # The calls are in the request log, as the playground's.
    page.goto("/dashboard/calls")
    expect(page.get_by_test_id("surface").first).to_have_text("Playground")
