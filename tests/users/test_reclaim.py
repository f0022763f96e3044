"""Taking an account back (issue 36, item 1): a password reset ends everything the
previous holder of the password set in motion (pending moves and every other link,
sessions, keys), and a confirmation or a password change ends the pending links.

End to end: a live api server and a real Celery worker mailing a real SMTP server on
127.0.0.1; the squatter and the owner are separate cookie jars, and links are followed
with the token from the e-mail, as a person would."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack
from tests.mcp.test_tools import raw_call
from tests.support.factories import PASSWORD, unique_email
from tests.support.mail_stack import (
    CONFIRM_PATH,
    RESET_PATH,
    confirmed_account,
    sign_in,
    sign_up_unconfirmed,
)
from tests.users.test_mail_flows import NEW_PASSWORD, call_until, new_client

MOVE_SUBJECT = "Confirm your new e-mail address"


@pytest.fixture
def squatter(mail_stack: Stack) -> Iterator[httpx.Client]:
    with new_client(mail_stack) as client:
        yield client


@pytest.fixture
def owner(mail_stack: Stack) -> Iterator[httpx.Client]:
    with new_client(mail_stack) as client:
        yield client


def ask_move(client: httpx.Client, smtp: FakeSmtp, to: str, password: str = PASSWORD) -> str:
    """Ask to move the signed-in account to `to`; the token of the link mailed there."""
    asked = client.post("/account/email", json={"email": to, "currentPassword": password})
    assert asked.status_code == 202, asked.text
    return smtp.wait_for(to, MOVE_SUBJECT).token(CONFIRM_PATH)


def reset_by_mail(client: httpx.Client, smtp: FakeSmtp, email: str, count: int = 1) -> None:
    """The address's owner asks for a reset link and follows it (new password)."""
    assert client.post("/auth/password-reset", json={"email": email}).status_code == 202
    token = smtp.wait_for(email, "Reset your password", count=count).token(RESET_PATH)
    body = {"token": token, "password": NEW_PASSWORD}
    done = client.post("/auth/password-reset/confirm", json=body)
    assert done.status_code == 204, done.text


def refused_key(stack: Stack, key: str, deadline_s: float = 3.0) -> httpx.Response:
    """Poll a data call with the key until it is refused (revocation: within 1 s)."""
    deadline = time.monotonic() + deadline_s
    while True:
        response = raw_call(stack.mcp_url, f"Bearer {key}")
        if response.status_code != 200 or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def refused_link(client: httpx.Client, token: str) -> None:
    followed = client.post("/auth/email/confirm", json={"token": token})
    assert followed.status_code == 422, followed.text
    assert followed.json()["error"]["code"] == "INVALID_ARGUMENT"


class TestSquattedAccountTakenBack:
    def test_a_move_asked_before_the_owners_reset_never_happens(
        self,
        mail_stack: Stack,
        fake_smtp: FakeSmtp,
        squatter: httpx.Client,
        owner: httpx.Client,
    ) -> None:
        """The attack as reported: sign up with V, ask to move to W and keep the link;
        the owner reclaims V by a reset and makes a key; the squatter follows the link,
        resets the password at W and signs in."""
        victim, _ = sign_up_unconfirmed(squatter, fake_smtp)
        sign_in(squatter, victim)
        theirs = unique_email("squatter")
        move_link = ask_move(squatter, fake_smtp, theirs)

        reset_by_mail(owner, fake_smtp, victim)
        me = sign_in(owner, victim, NEW_PASSWORD)
        assert (me["emailVerified"], me["pendingEmail"]) == (True, None)
        made = owner.post("/api-keys", json={"name": "owner's agent"})
        assert made.status_code == 201, made.text
        key_id = made.json()["key"]["keyId"]

        with new_client(mail_stack) as elsewhere:
            refused_link(elsewhere, move_link)
        assert squatter.post("/auth/password-reset", json={"email": theirs}).status_code == 202
        taken = squatter.post("/auth/signin", json={"email": theirs, "password": NEW_PASSWORD})
        assert taken.status_code == 401

        me = owner.get("/me").json()
        assert (me["email"], me["pendingEmail"], me["emailVerified"]) == (victim, None, True)
        assert [k["keyId"] for k in owner.get("/api-keys").json()["keys"]] == [key_id]
        with new_client(mail_stack) as later:
            assert sign_in(later, victim, NEW_PASSWORD)["userId"] == me["userId"]
        # The owner's second reset mail is a sync point for the worker: none went to W.
        assert owner.post("/auth/password-reset", json={"email": victim}).status_code == 202
        fake_smtp.wait_for(victim, "Reset your password", count=2)
        assert [m.subject for m in fake_smtp.messages(theirs)] == [MOVE_SUBJECT]

    async def test_a_reset_ends_keys_and_sessions_even_after_a_mistaken_confirmation(
        self,
        mail_stack: Stack,
        fake_smtp: FakeSmtp,
        squatter: httpx.Client,
        owner: httpx.Client,
    ) -> None:
        """The owner follows the sign-up link the squatter caused (the account is then
        confirmed, and the squatter's key works): a later reset still ends the key."""
        victim, mail = sign_up_unconfirmed(squatter, fake_smtp)
        assert owner.post(
            "/auth/email/confirm", json={"token": mail.token(CONFIRM_PATH)}
        ).is_success
        sign_in(squatter, victim)
        key = squatter.post("/api-keys", json={"name": "squatter"}).json()["plaintext"]
        assert "error" not in await call_until(mail_stack, key, ok=True)

        reset_by_mail(owner, fake_smtp, victim)

        refused = refused_key(mail_stack, key)
        assert refused.status_code == 403, refused.text
        assert "revoked" in refused.json()["error"]["message"]
        assert squatter.get("/me").status_code == 401
        sign_in(owner, victim, NEW_PASSWORD)
        assert owner.get("/api-keys").json() == {"keys": []}

    def test_following_the_sign_up_link_ends_a_pending_move(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, squatter: httpx.Client
    ) -> None:
        victim, mail = sign_up_unconfirmed(squatter, fake_smtp)
        sign_in(squatter, victim)
        move_link = ask_move(squatter, fake_smtp, unique_email("squatter"))
        with new_client(mail_stack) as owner:
            confirmed = owner.post("/auth/email/confirm", json={"token": mail.token(CONFIRM_PATH)})
            assert confirmed.status_code == 200, confirmed.text
            refused_link(owner, move_link)
        me = squatter.get("/me").json()
        assert (me["email"], me["pendingEmail"]) == (victim, None)


class TestPasswordChange:
    def test_a_move_asked_with_the_old_password_dies_with_it(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, owner: httpx.Client
    ) -> None:
        """Someone who learnt the password asks to move the account to their address;
        the owner changes the password: the link they got is dead."""
        account = confirmed_account(owner, fake_smtp)
        with new_client(mail_stack) as thief:
            sign_in(thief, account.email)
            move_link = ask_move(thief, fake_smtp, unique_email("thief"))
        changed = owner.post(
            "/account/password", json={"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}
        )
        assert changed.status_code == 204, changed.text
        refused_link(owner, move_link)
        assert owner.get("/me").json()["email"] == account.email
