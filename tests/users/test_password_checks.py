"""Issue 51, item 3: wrong passwords sent from a session do not lock the owner out.

Every change that asks for the current password from a session (a move to another
address, a new password, deleting the account) counts a wrong one as a failed sign-in:
against the address it came from and the account, whose backoff spares the addresses
the owner signed in from. A flow's own budgets (moves an hour) count only requests with
the right password. So a stranger holding the owner's session cookie, guessing from its
own address, is stopped there, while the owner, from its own, still makes the change.

End to end against a live api server, its worker and a real SMTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack
from tests.support.factories import PASSWORD, unique_email
from tests.support.mail_stack import confirmed_account
from tests.users.test_mail_flows import new_client

# The stranger's own address (Linux answers on all of 127.0.0.0/8; the tests' proxy
# address is 127.0.0.1, so the api takes this one as the client's).
STRANGER_ADDRESS = "127.0.0.51"
WRONG = "not-the-password-51"
# The sign-in throttle's defaults: 10 failures per (account, address) in 15 minutes, and
# from the 10th on, a pause for the account on any address the owner never signed in from.
GUESSES = 10


def move(password: str) -> Callable[[httpx.Client], httpx.Response]:
    return lambda client: client.post(
        "/account/email", json={"email": unique_email("moved"), "currentPassword": password}
    )


def new_password(password: str) -> Callable[[httpx.Client], httpx.Response]:
    body = {"currentPassword": password, "newPassword": "an entirely new passphrase 51"}
    return lambda client: client.post("/account/password", json=body)


def delete(password: str) -> Callable[[httpx.Client], httpx.Response]:
    return lambda client: client.post("/account/delete", json={"currentPassword": password})


FLOWS = {"email": (move, 202), "password": (new_password, 204), "delete": (delete, 204)}


@pytest.mark.parametrize("flow", sorted(FLOWS))
def test_a_sessions_wrong_passwords_leave_the_owner_the_change(
    flow: str, mail_stack: Stack, fake_smtp: FakeSmtp
) -> None:
    request, done = FLOWS[flow]
    with new_client(mail_stack) as owner:
        confirmed_account(owner, fake_smtp)  # signed in from 127.0.0.1: the owner's address
        transport = httpx.HTTPTransport(local_address=STRANGER_ADDRESS)
        with httpx.Client(
            base_url=mail_stack.server.url,
            transport=transport,
            cookies=owner.cookies,  # the owner's session, in a stranger's hands
            timeout=30,
        ) as stranger:
            guesses = [request(WRONG)(stranger) for _ in range(GUESSES)]
            after_guesses = request(PASSWORD)(stranger)

        assert [guess.status_code for guess in guesses] == [403] * GUESSES
        assert guesses[0].json()["error"]["code"] == "FORBIDDEN"
        # the stranger's address has used up its failures: refused without a check
        assert after_guesses.status_code == 429, after_guesses.text
        assert after_guesses.json()["error"]["code"] == "RATE_LIMITED"

        answer = request(PASSWORD)(owner)
        assert answer.status_code == done, answer.text
