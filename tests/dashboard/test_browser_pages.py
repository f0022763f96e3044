"""The request log a page at a time, and a checkout cancelled then paid with its receipt on
the billing page, in a real browser at phone and desktop widths (issue 55, item 5)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from playwright.sync_api import Dialog, Page, expect

from app.runtime import reload_settings
from tests.dashboard.conftest import DashboardServer, Shot, look, sign_up
from tests.request_log.seed import calls, seed_calls

CALLS = 60  # more than two pages of 25
# A page of 25 calls, its filters and pager at most this tall (the whole log of 55 calls
# on one page was 12,527 px at 390 px wide).
MAX_PAGE_HEIGHT = {"phone": 4_200, "desktop": 2_000}


@pytest.fixture
def server_settings(dashboard_server: DashboardServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's Settings on the dashboard server's Redis and key prefix."""
    for name, value in dashboard_server.env.items():
        if name.startswith("GEOSVC_"):
            monkeypatch.setenv(name, value)
    reload_settings()


def height(page: Page) -> int:
    return int(page.evaluate("document.documentElement.scrollHeight"))


def test_the_request_log_pages_forward_and_back(
    page: Page, server_settings: None, viewport: str, shot: Shot
) -> None:
    user_id = sign_up(page, shot, "Flo")
    start = int(time.time() * 1000) - 600_000
    maps = calls(5, start_ms=start + 100, tool="static_map")
    seed_calls(user_id, calls(CALLS - 5, start_ms=start) + maps)

    page.goto("/dashboard/calls")
    rows = page.get_by_test_id("calls").locator("tbody tr")
    summary = page.get_by_test_id("calls-summary")
    expect(rows).to_have_count(25)
    expect(summary).to_contain_text(f"Calls 1–25 of {CALLS}")
    expect(page.get_by_role("link", name="← Newer calls")).to_have_count(0)  # the first page
    assert height(page) <= MAX_PAGE_HEIGHT[viewport], height(page)
    look(page, shot, "calls-page-1")
    first_page = rows.all_inner_texts()

    page.get_by_role("link", name="Older calls →").click()
    expect(summary).to_contain_text(f"Calls 26–50 of {CALLS}")
    expect(rows).to_have_count(25)
    assert not set(rows.all_inner_texts()) & set(first_page)
    look(page, shot, "calls-page-2")

    page.get_by_role("link", name="Older calls →").click()
    expect(summary).to_contain_text(f"Calls 51–{CALLS} of {CALLS}")
    expect(rows).to_have_count(CALLS - 50)
    expect(page.get_by_role("link", name="Older calls →")).to_have_count(0)  # the last page
    expect(page.get_by_test_id("call-id").last).to_have_text("call_geocode_0")
    look(page, shot, "calls-page-3")

    page.get_by_role("link", name="← Newer calls").click()
    page.get_by_role("link", name="← Newer calls").click()
    expect(summary).to_contain_text(f"Calls 1–25 of {CALLS}")
    assert rows.all_inner_texts() == first_page

    # A filter keeps its pages: the tool's five calls are one page.
    page.get_by_label("Tool").select_option("static_map")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(5)
    expect(summary).to_contain_text("5 calls matching the filters")
    expect(page.get_by_test_id("pager")).to_have_count(0)
    look(page, shot, "calls-tool")


def test_a_checkout_is_cancelled_then_paid_and_its_receipt_listed(page: Page, shot: Shot) -> None:
    sign_up(page, shot, "Gus")
    questions: list[str] = []

    def accept(dialog: Dialog) -> None:
        questions.append(dialog.message)
        dialog.accept()

    answer: Callable[[Dialog], None] = accept
    page.goto("/dashboard/subscription")
    page.get_by_role("button", name="Subscribe").click()
    expect(page.get_by_role("heading", name="Checkout")).to_be_visible()
    page.get_by_role("link", name="Back").click()
    expect(page.get_by_test_id("status")).to_have_text("awaiting payment")
    look(page, shot, "subscription-pending")

    page.once("dialog", answer)
    page.get_by_role("button", name="Cancel checkout").click()
    expect(page.get_by_role("status")).to_contain_text("The checkout is cancelled")
    assert "Cancel this checkout?" in questions[0]
    expect(page.get_by_test_id("status")).to_have_text("no subscription")
    look(page, shot, "subscription-checkout-cancelled")

    page.get_by_role("button", name="Subscribe").click()
    page.get_by_role("button", name="Pay and subscribe").click()
    expect(page.get_by_test_id("plan")).to_have_text("standard")
    page.get_by_role("navigation").get_by_role("link", name="Billing").click()
    receipts = page.get_by_test_id("invoices").locator("tbody tr")
    expect(receipts).to_have_count(1)
    expect(receipts.first).to_contain_text("paid")
    expect(page.get_by_test_id("invoice-total")).to_have_text("$49.00")
    look(page, shot, "billing-receipts")
