"""An api server and a Celery worker that send real mail to the fake SMTP server, so
e-mail verification is on: for the accounts' e-mail flows and the usage alerts."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest

from tests.fakes.smtp import FakeSmtp, Received
from tests.mcp.conftest import Stack, running_stack
from tests.support.factories import PASSWORD, poll, unique_email
from tests.support.fixtures import Backend, PerBackend
from tests.support.live_server import TEST_RUN_PREFIX

# Small quotas: a few calls reach the usage alerts (warning at 80 %: 4 of 5, 8 of 10).
FREE_QUOTA = 5
STANDARD_QUOTA = 10

CONFIRM_PATH = "/dashboard/confirm-email"
RESET_PATH = "/dashboard/reset-password"


@pytest.fixture  # function-scoped over PerBackend: tests/support/fixtures.py says why
def mail_stack(
    backend: Backend,
    fake_smtp: FakeSmtp,
    tmp_path_factory: pytest.TempPathFactory,
    per_backend: PerBackend,
) -> Stack:
    env = backend.env(
        **fake_smtp.env(),
        GEOSVC_REDIS_KEY_PREFIX=f"{TEST_RUN_PREFIX}mail-{backend.name}:",
        GEOSVC_FREE_QUOTA=str(FREE_QUOTA),
        GEOSVC_STANDARD_QUOTA=str(STANDARD_QUOTA),
    )
    return per_backend.get(
        f"mail-{backend.name}",
        lambda: running_stack(env, tmp_path_factory.mktemp(f"mail-{backend.name}")),
    )


@dataclass
class MailAccount:
    email: str
    user_id: str
    http: httpx.Client  # signed in


def sign_up_unconfirmed(
    http: httpx.Client, smtp: FakeSmtp, *, email: str | None = None, name: str | None = None
) -> tuple[str, Received]:
    """Sign up (202, no session) and wait for the confirmation e-mail."""
    email = email or unique_email()
    body = {"email": email, "password": PASSWORD} | ({"name": name} if name else {})
    response = http.post("/auth/signup", json=body)
    assert response.status_code == 202, response.text
    return email, smtp.wait_for(email, "Confirm your e-mail address")


def sign_in(http: httpx.Client, email: str, password: str = PASSWORD) -> dict:
    """Sign in (polling: a sign-up's account is made just after its 202)."""
    body = {"email": email, "password": password}
    response = poll(lambda: http.post("/auth/signin", json=body), until=200)
    assert response.status_code == 200, response.text
    return dict(response.json())


def confirmed_account(http: httpx.Client, smtp: FakeSmtp) -> MailAccount:
    """A new account whose address is confirmed, signed in on `http`."""
    email, mail = sign_up_unconfirmed(http, smtp)
    confirmed = http.post("/auth/email/confirm", json={"token": mail.token(CONFIRM_PATH)})
    assert confirmed.status_code == 200, confirmed.text
    me = sign_in(http, email)
    return MailAccount(email, str(me["userId"]), http)
