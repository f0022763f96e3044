"""The e-mail flows in a real browser at desktop and phone widths, with a real Celery
worker mailing through a real SMTP server: confirm the address, forgot and reset the
password, change the password and the address, delete the account, and follow a usage
alert to the usage page. Links are opened from the e-mails as a person would."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Dialog, Page, expect

from tests.dashboard.conftest import MAIL_FREE_QUOTA, Shot, look, new_page
from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack
from tests.mcp.test_tools import raw_call
from tests.support.factories import PASSWORD, unique_email
from tests.support.mail_stack import CONFIRM_PATH, RESET_PATH

NEW_PASSWORD = "another good passphrase"


@pytest.fixture
def page(browser: Browser, mail_dashboard: Stack, viewport: str) -> Iterator[Page]:
    with new_page(browser, mail_dashboard.server.url, viewport) as opened:
        yield opened


def sign_up(page: Page, fake_smtp: FakeSmtp, shot: Shot) -> tuple[str, str]:
    """Through the form: "check your inbox"; returns (address, the confirmation link)."""
    email = unique_email("browser")
    page.goto("/dashboard/signup")
    page.get_by_label("Name (optional)").fill("Grace")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password (at least 8 characters)").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Check your inbox")).to_be_visible()
    expect(page.get_by_test_id("check-inbox")).to_contain_text(email)
    look(page, shot, "check-inbox")
    link = fake_smtp.wait_for(email, "Confirm your e-mail address").link(CONFIRM_PATH)
    return email, link


def sign_in(page: Page, email: str, password: str = PASSWORD) -> None:
    page.goto("/dashboard/signin")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name=re.compile("^Hello"))).to_be_visible()


def open_link(page: Page, link: str, button: str) -> None:
    """Open an e-mailed link; its token leaves the address bar before anything is sent."""
    page.goto(link)
    assert "#t=" not in page.url
    assert page.locator("input[name=token]").input_value() == link.split("#t=")[1]
    page.get_by_role("button", name=button).click()


def confirmed(page: Page, fake_smtp: FakeSmtp, shot: Shot) -> str:
    email, link = sign_up(page, fake_smtp, shot)
    open_link(page, link, "Confirm the address")
    expect(page.get_by_role("status")).to_contain_text("Your e-mail address is confirmed")
    sign_in(page, email)
    return email


def test_sign_up_confirm_the_address_then_keys_work(
    page: Page, fake_smtp: FakeSmtp, shot: Shot
) -> None:
    email, link = sign_up(page, fake_smtp, shot)
    sign_in(page, email)
    banner = page.get_by_test_id("unconfirmed")
    expect(banner).to_contain_text("Your API keys make no data calls (FORBIDDEN)")
    look(page, shot, "home-unconfirmed")
    banner.get_by_role("button", name="Send the link again").click()
    expect(page.get_by_role("status")).to_contain_text("We sent the confirmation link again")
    expect(page.get_by_test_id("email-state")).to_have_text("not confirmed")
    fake_smtp.wait_for(email, "Confirm your e-mail address", count=2)

    open_link(page, link, "Confirm the address")

    expect(page.get_by_role("status")).to_contain_text("Your e-mail address is confirmed")
    expect(page.get_by_test_id("unconfirmed")).to_have_count(0)
    look(page, shot, "home-confirmed")
    page.goto(link)  # a used link says so
    page.get_by_role("button", name="Confirm the address").click()
    expect(page.get_by_role("alert")).to_contain_text("invalid, was already used or has expired")
    look(page, shot, "confirm-used-link")


def test_forgot_password_and_reset_it_from_the_mail(
    browser: Browser, mail_dashboard: Stack, viewport: str, fake_smtp: FakeSmtp, shot: Shot
) -> None:
    with new_page(browser, mail_dashboard.server.url, viewport) as first:
        email = confirmed(first, fake_smtp, shot)
        with new_page(browser, mail_dashboard.server.url, viewport) as page:
            page.goto("/dashboard/signin")
            page.get_by_role("link", name="Forgot your password?").click()
            page.get_by_label("E-mail").fill(email)
            page.get_by_role("button", name="Send the reset link").click()
            expect(page.get_by_test_id("reset-sent")).to_contain_text("If an account uses")
            look(page, shot, "reset-sent")
            link = fake_smtp.wait_for(email, "Reset your password").link(RESET_PATH)

            page.goto(link)
            assert "#t=" not in page.url
            page.get_by_label("New password (at least 8 characters)").fill("password")
            page.get_by_role("button", name="Set the new password").click()
            expect(page.locator("#password-error")).to_be_visible()  # a common password
            look(page, shot, "reset-refused-password")
            page.get_by_label("New password (at least 8 characters)").fill(NEW_PASSWORD)
            page.get_by_role("button", name="Set the new password").click()

            expect(page.get_by_role("status")).to_contain_text("Your new password is set")
            look(page, shot, "reset-done")
            sign_in(page, email, NEW_PASSWORD)
        first.goto("/dashboard/account")  # the other browser was signed out
        expect(first.get_by_role("heading", name="Sign in")).to_be_visible()


def test_change_the_password_and_the_address(page: Page, fake_smtp: FakeSmtp, shot: Shot) -> None:
    email = confirmed(page, fake_smtp, shot)
    page.get_by_role("navigation").get_by_role("link", name="Account").click()
    expect(page.get_by_test_id("account-email")).to_have_text(email)
    expect(page.get_by_test_id("email-state")).to_have_text("confirmed")
    look(page, shot, "account")

    page.locator("#current_password").fill("not the password")
    page.locator("#new_password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#current_password-error")).to_have_text("The current password is wrong.")
    look(page, shot, "account-wrong-password")
    page.locator("#current_password").fill(PASSWORD)
    page.locator("#new_password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    fake_smtp.wait_for(email, "Your password was changed")

    new_email = unique_email("moved")
    page.get_by_label("New e-mail").fill(new_email)
    page.locator("#email_password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Send a confirmation link").click()
    expect(page.get_by_role("status")).to_contain_text("Check the new address's inbox")
    expect(page.get_by_test_id("pending-email")).to_contain_text(new_email)
    look(page, shot, "account-pending-email")
    link = fake_smtp.wait_for(new_email, "Confirm your new e-mail address").link(CONFIRM_PATH)

    open_link(page, link, "Confirm the address")

    expect(page.get_by_role("status")).to_contain_text("now uses its new e-mail address")
    page.goto("/dashboard/account")
    expect(page.get_by_test_id("account-email")).to_have_text(new_email)
    expect(page.get_by_test_id("pending-email")).to_have_count(0)
    assert new_email in fake_smtp.wait_for(email, "e-mail address was changed").text


def test_delete_the_account_after_a_confirmation(
    page: Page, fake_smtp: FakeSmtp, shot: Shot
) -> None:
    email = confirmed(page, fake_smtp, shot)
    page.goto("/dashboard/account")
    questions: list[str] = []

    def answer(accept: bool) -> None:
        def on_dialog(dialog: Dialog) -> None:
            questions.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()

        page.once("dialog", on_dialog)

    page.locator("#delete_password").fill(PASSWORD)
    answer(False)
    page.get_by_role("button", name="Delete the account").click()
    expect(page.get_by_test_id("account-email")).to_have_text(email)  # still there
    assert "Delete this account for good?" in questions[0]
    answer(True)
    page.get_by_role("button", name="Delete the account").click()

    expect(page.get_by_role("status")).to_contain_text("Your account is deleted")
    look(page, shot, "account-deleted")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong e-mail or password")
    fake_smtp.wait_for(email, "Your account was deleted")


def test_a_usage_alert_leads_to_the_usage_page(
    page: Page, mail_dashboard: Stack, fake_smtp: FakeSmtp, shot: Shot
) -> None:
    email = confirmed(page, fake_smtp, shot)
    page.goto("/dashboard/keys")
    page.get_by_label("Name").fill("agent")
    page.get_by_role("button", name="Create key").click()
    key = page.locator("#plaintext").inner_text().strip()
    warning_at = (MAIL_FREE_QUOTA * 80 + 99) // 100
    for _ in range(warning_at):
        response = raw_call(mail_dashboard.mcp_url, f"Bearer {key}")
        assert response.status_code == 200
        assert response.json()["result"]["isError"] is False, response.text

    alert = fake_smtp.wait_for(email, "You have used 80 % of your credits")

    page.goto(alert.link("/dashboard/usage"))
    expect(page.get_by_test_id("usage-state")).to_have_text("Warning")
    expect(page.get_by_test_id("used")).to_have_text(str(warning_at))
    look(page, shot, "usage-after-alert")
