"""No token, password, key or session cookie reaches a log line: every e-mail flow runs
against the live server and the Celery worker that mails (through a mail server that
first refuses, so the retries log too), then both processes' logs are searched."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack, connect
from tests.support.factories import PASSWORD, unique_email
from tests.support.mail_stack import CONFIRM_PATH, RESET_PATH, sign_in, sign_up_unconfirmed

SECOND = "second passphrase for the log test"
THIRD = "third passphrase for the log test"


@pytest.fixture
def http(mail_stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=mail_stack.server.url, timeout=30) as client:
        yield client


def wait_until(condition: object, deadline_s: float = 30.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


async def test_no_secret_of_any_flow_is_logged(
    mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
) -> None:
    secrets = [PASSWORD, SECOND, THIRD]
    email, mail = sign_up_unconfirmed(http, fake_smtp)
    secrets.append(mail.token(CONFIRM_PATH))
    assert http.post("/auth/email/confirm", json={"token": secrets[-1]}).status_code == 200
    sign_in(http, email)
    secrets.append(http.cookies["svc_session"])
    key = http.post("/api-keys", json={"name": "agent"}).json()["plaintext"]
    secrets.append(key)
    async with connect(mail_stack.mcp_url, key) as client:
        assert not (await client.call_tool("geocode", {"query": "Austin, TX"})).is_error
    # a credential in a URL is refused, and its line redacted
    httpx.get(f"{mail_stack.server.url}/me?token={secrets[-3]}&password={PASSWORD}")

    # the mail server refuses for a while: the reset link goes out on a retry
    fake_smtp.fault, refused = 451, fake_smtp.refused
    try:
        assert http.post("/auth/password-reset", json={"email": email}).status_code == 202
        wait_until(lambda: fake_smtp.refused > refused)
    finally:
        fake_smtp.fault = None
    reset = fake_smtp.wait_for(email, "Reset your password", deadline_s=60)
    secrets.append(reset.token(RESET_PATH))
    body = {"token": secrets[-1], "password": SECOND}
    assert http.post("/auth/password-reset/confirm", json=body).status_code == 204
    sign_in(http, email, SECOND)
    secrets.append(http.cookies["svc_session"])
    changed = {"currentPassword": SECOND, "newPassword": THIRD}
    assert http.post("/account/password", json=changed).status_code == 204
    new_email = unique_email("moved")
    move = {"email": new_email, "currentPassword": THIRD}
    assert http.post("/account/email", json=move).status_code == 202
    secrets.append(fake_smtp.wait_for(new_email, "Confirm your new").token(CONFIRM_PATH))
    assert http.post("/auth/email/confirm", json={"token": secrets[-1]}).status_code == 200
    assert http.post("/account/delete", json={"currentPassword": THIRD}).status_code == 204
    fake_smtp.wait_for(new_email, "Your account was deleted")

    logs = {"server": mail_stack.server.log(), "worker": mail_stack.worker.log()}
    assert "mail.account_notice" in logs["worker"]  # the worker's lines are there
    assert "retry" in logs["worker"].lower()  # and the refused delivery was retried
    for name, text in logs.items():
        leaked = [secret[:6] + "…" for secret in secrets if secret in text]
        assert leaked == [], f"{name} log holds secrets: {leaked}"
        assert "#t=" not in text
