"""The dashboard in a real browser, as a person uses it, at desktop and phone widths:
sign up -> create, copy and revoke keys -> subscribe through the local checkout ->
cancel and resume -> the usage page after real ledger rows."""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Callable

from playwright.sync_api import Dialog, Page, expect

from app.kit.clock import utcnow
from tests.dashboard.conftest import (
    FREE_QUOTA,
    STANDARD_QUOTA,
    DashboardServer,
    Shot,
    create_key,
    look,
    sign_up,
    today_label,
)


def test_sign_up_keys_subscription_and_usage(
    page: Page, dashboard_server: DashboardServer, shot: Shot
) -> None:
    user_id = sign_up(page, shot, "Ada")

    # A key: copy it, and a ready-to-paste client configuration with it filled in.
    plaintext = create_key(page, "laptop")
    assert re.fullmatch(r"svc_live_ak_[a-z0-9]{16}_[A-Za-z0-9]{40}", plaintext)
    page.get_by_role("button", name="Copy key").click()
    expect(page.locator("#plaintext-status")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == plaintext
    config = json.loads(page.locator("#client-config").inner_text())
    assert config == {
        "mcpServers": {
            "geosvc": {
                "type": "http",
                "url": f"{dashboard_server.url}/mcp",
                "headers": {"Authorization": f"Bearer {plaintext}"},
            }
        }
    }
    page.get_by_role("button", name="Copy configuration").click()
    expect(page.locator("#client-config-status")).to_have_text("Copied")
    assert json.loads(page.evaluate("navigator.clipboard.readText()")) == config
    look(page, shot, "key-created")
    laptop_id = plaintext.split("_")[3]

    # Revoke asks first: "no" keeps the key, "yes" revokes it.
    temp_id = create_key(page, "temporary").split("_")[3]
    page.goto("/dashboard/keys")
    row = page.locator(f"tr[data-key-id='{temp_id}']")
    questions: list[str] = []

    def answer(accept: bool) -> Callable[[Dialog], None]:
        def on_dialog(dialog: Dialog) -> None:
            questions.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()

        return on_dialog

    page.once("dialog", answer(False))
    row.get_by_role("button", name="Revoke").click()
    expect(row).to_be_visible()
    assert "Revoke the key “temporary”?" in questions[0]
    page.once("dialog", answer(True))
    row.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status")).to_contain_text("The key was revoked")
    expect(page.locator(f"tr[data-key-id='{temp_id}']")).to_have_count(0)
    expect(page.locator(f"tr[data-key-id='{laptop_id}']")).to_contain_text("never")
    look(page, shot, "keys")

    # Subscribe: prices on the plan page and the checkout page; pay.
    page.get_by_role("navigation").get_by_role("link", name="Subscription").click()
    expect(page.get_by_test_id("standard-price")).to_have_text("$49.00 / month")
    expect(page.get_by_test_id("overage-price")).to_contain_text("$0.50 per 1,000 credits")
    look(page, shot, "subscription-free")
    page.get_by_role("button", name="Subscribe").click()
    expect(page.get_by_role("heading", name="Checkout")).to_be_visible()
    expect(page.get_by_test_id("standard-price")).to_have_text("$49.00 / month")
    expect(page.get_by_test_id("overage-price")).to_contain_text("$0.50 per 1,000 credits")
    look(page, shot, "checkout")
    page.get_by_role("button", name="Pay and subscribe").click()
    expect(page.get_by_role("status")).to_have_text(
        "Payment received: you are on the standard plan."
    )
    expect(page.get_by_test_id("plan")).to_have_text("standard")
    renews = re.compile(r"Renews on \d{1,2} \w{3} \d{4} at \$49\.00")
    expect(page.get_by_text(renews)).to_be_visible()

    # Cancel asks first; then Resume undoes it.
    page.once("dialog", answer(True))
    page.get_by_role("button", name="Cancel at period end").click()
    expect(page.get_by_test_id("ends")).to_contain_text("stays in force until")
    assert "Cancel the standard plan?" in questions[-1]
    look(page, shot, "subscription-cancelled")
    page.get_by_role("button", name="Resume subscription").click()
    expect(page.get_by_role("status")).to_contain_text("Your subscription is resumed")
    expect(page.get_by_role("button", name="Cancel at period end")).to_be_visible()
    look(page, shot, "subscription-active")
    page.get_by_role("navigation").get_by_role("link", name="Billing").click()
    expect(page.get_by_text("yes, on")).to_be_visible()
    look(page, shot, "billing")

    # Usage: charged calls in the ledger, then the page a person reads.
    dashboard_server.record_usage(
        user_id,
        [(laptop_id, "geocode")] * 3 + [(laptop_id, "static_map")] * 2 + [(temp_id, "geocode")],
    )
    page.get_by_role("navigation").get_by_role("link", name="Usage").click()
    expect(page.get_by_test_id("used")).to_have_text("6")
    expect(page.get_by_test_id("usage-state")).to_have_text("Over quota")
    overage = 6 - STANDARD_QUOTA
    expect(page.get_by_test_id("gauge-note")).to_contain_text(f"{overage} credit past the quota")
    now = utcnow()
    days_in_month = calendar.monthrange(now.year, now.month)[1]
    expect(page.locator("[data-testid=daily-chart] rect.bar")).to_have_count(days_in_month)
    today = page.locator("[data-testid=daily-chart] rect.bar.today title")
    expect(today).to_have_text(f"{today_label()}: 6 credits")
    expect(page.get_by_test_id("y-axis").locator("span")).to_have_text(["10", "5", "0"])
    chart, y_axis = page.get_by_test_id("daily-chart"), page.get_by_test_id("y-axis")
    top_label = y_axis.locator("span").first.bounding_box()
    chart_box = chart.bounding_box()
    assert top_label is not None
    assert chart_box is not None
    assert top_label["x"] + top_label["width"] <= chart_box["x"]  # beside the chart
    assert abs(top_label["y"] + top_label["height"] / 2 - chart_box["y"]) <= 2  # on its line
    by_tool = page.get_by_test_id("by-tool").locator("tbody tr")
    expect(by_tool.nth(0)).to_contain_text("geocode")
    expect(by_tool.nth(0)).to_contain_text("4")
    expect(by_tool.nth(1)).to_contain_text("static_map")
    by_key = page.get_by_test_id("by-key").locator("tbody tr")
    expect(by_key.nth(0)).to_contain_text("laptop")
    expect(by_key.nth(0)).to_contain_text("5")
    expect(by_key.nth(0)).to_contain_text(today_label())
    expect(by_key.nth(1)).to_contain_text("temporary")
    expect(by_key.nth(1)).to_contain_text("revoked")
    look(page, shot, "usage")
    page.goto("/dashboard/keys")
    expect(page.locator(f"tr[data-key-id='{laptop_id}']")).to_contain_text(today_label())


def test_free_account_at_its_cap_is_blocked_with_an_upgrade(
    page: Page, dashboard_server: DashboardServer, shot: Shot
) -> None:
    user_id = sign_up(page, shot, "Bo")
    nearly = FREE_QUOTA * 8 // 10
    dashboard_server.record_usage(user_id, [(None, "get_population")] * nearly)
    page.goto("/dashboard/usage")
    expect(page.get_by_test_id("usage-state")).to_have_text("Warning")
    expect(page.get_by_test_id("blocked")).to_have_count(0)
    expect(page.get_by_role("button", name="Upgrade to standard")).to_be_visible()
    look(page, shot, "usage-warning")

    dashboard_server.record_usage(user_id, [(None, "get_population")] * (FREE_QUOTA - nearly))
    page.reload()

    expect(page.get_by_test_id("usage-state")).to_have_text("Blocked")
    expect(page.get_by_test_id("blocked")).to_contain_text("Data calls are blocked")
    color = page.get_by_test_id("blocked").evaluate("e => getComputedStyle(e).color")
    assert color == "rgb(180, 35, 24)"  # the "bad" red
    look(page, shot, "usage-blocked")
    page.get_by_test_id("blocked").get_by_role("button", name="Upgrade to standard").click()
    expect(page.get_by_role("button", name="Pay and subscribe")).to_be_visible()


def test_unknown_page_is_an_html_404_and_the_api_keeps_json(page: Page, shot: Shot) -> None:
    response = page.goto("/dashboard/no-such-page")

    assert response is not None
    assert response.status == 404
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    look(page, shot, "not-found")
    icon = page.request.get(page.locator("link[rel=icon]").get_attribute("href") or "")
    assert icon.status == 200
    assert icon.headers["content-type"] == "image/svg+xml"
    api = page.request.get("/api-keys/nope/more", headers={"Accept": "text/html"})
    assert api.status == 404
    assert api.json()["error"]["code"] == "NOT_FOUND"
    page.get_by_role("link", name="Sign in").click()
    page.get_by_label("E-mail").fill("nobody@example.com")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong e-mail or password")
    expect(page.get_by_label("E-mail")).to_have_value("nobody@example.com")
    look(page, shot, "signin-error")
