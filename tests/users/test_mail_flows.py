"""The e-mail flows end to end: a live api server and a real Celery worker that mails
through a real SMTP server on 127.0.0.1; links are followed as a person would (their
token from the e-mail). Verification is on (SMTP is configured)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import create_engine
from sqlmodel import Session, col, func, select

from app.models import EmailToken, UsageEvent, User
from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack, connect, structured
from tests.mcp.test_tools import raw_call
from tests.support.factories import PASSWORD, unique_email
from tests.support.mail_stack import (
    CONFIRM_PATH,
    RESET_PATH,
    confirmed_account,
    sign_in,
    sign_up_unconfirmed,
)

NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
def http(mail_stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=mail_stack.server.url, timeout=30) as client:
        yield client


def new_client(stack: Stack) -> httpx.Client:
    return httpx.Client(base_url=stack.server.url, timeout=30)


def row_of(stack: Stack, user_id: str) -> User:
    engine = create_engine(stack.database_url)
    try:
        with Session(engine) as session:
            user = session.get(User, user_id)
            assert user is not None
            session.expunge(user)
            return user
    finally:
        engine.dispose()


def count(stack: Stack, model: type, user_id: str) -> int:
    engine = create_engine(stack.database_url)
    try:
        with Session(engine) as session:
            query = select(func.count()).where(col(model.user_id) == user_id)  # type: ignore[attr-defined]
            return int(session.exec(query).one())
    finally:
        engine.dispose()


async def call_until(stack: Stack, key: str, ok: bool, deadline_s: float = 5.0) -> dict:
    """Call geocode until it succeeds (`ok`) or fails; the last structured answer. One
    MCP session: the server is stateless, each call is authorised afresh."""
    deadline = time.monotonic() + deadline_s
    async with connect(stack.mcp_url, key) as client:
        while True:
            result = await client.call_tool("geocode", {"query": "Austin, TX", "limit": 1})
            if bool(result.is_error) != ok or time.monotonic() > deadline:
                return structured(result)
            await _pause()


async def _pause() -> None:
    import anyio

    await anyio.sleep(0.1)


class TestVerification:
    async def test_keys_make_no_data_calls_until_the_link_is_followed(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        email, mail = sign_up_unconfirmed(http, fake_smtp, name="Ada")
        assert (
            "set-cookie"
            not in http.post(
                "/auth/signup", json={"email": unique_email(), "password": PASSWORD}
            ).headers
        )
        me = sign_in(http, email)
        assert (me["emailVerified"], me["user"]["name"]) == (False, "Ada")
        key = http.post("/api-keys", json={"name": "agent"}).json()["plaintext"]

        refused = await call_until(mail_stack, key, ok=False)
        assert refused["error"]["code"] == "FORBIDDEN"
        assert refused["error"]["reason"] == "email_unverified"
        assert "not confirmed" in refused["error"]["message"]
        job = http.post(
            "/v1/jobs",
            json={"tool": "get_population", "items": [{"postal_code": "10001"}]},
            headers={"Authorization": f"Bearer {key}"},
        )  # bulk work neither: refused before anything is stored
        assert (job.status_code, job.json()["error"]["reason"]) == (403, "email_unverified")
        assert http.get("/v1/jobs", headers={"Authorization": f"Bearer {key}"}).json()["jobs"] == []

        token = mail.token(CONFIRM_PATH)
        confirmed = http.post("/auth/email/confirm", json={"token": token})
        assert confirmed.status_code == 200, confirmed.text
        assert confirmed.json() == {"email": email, "emailVerified": True}
        assert http.get("/me").json()["emailVerified"] is True
        answer = await call_until(mail_stack, key, ok=True)
        assert "error" not in answer
        again = http.post("/auth/email/confirm", json={"token": token})
        assert (again.status_code, again.json()["error"]["code"]) == (422, "INVALID_ARGUMENT")

    def test_the_link_can_be_sent_again_until_confirmed(
        self, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        email, first = sign_up_unconfirmed(http, fake_smtp)
        sign_in(http, email)
        assert http.post("/auth/email/verification").status_code == 202
        second = fake_smtp.wait_for(email, "Confirm your e-mail address", count=2)
        assert second.token(CONFIRM_PATH) != first.token(CONFIRM_PATH)
        first_link = {"token": first.token(CONFIRM_PATH)}
        assert http.post("/auth/email/confirm", json=first_link).is_success
        resent = http.post("/auth/email/verification")
        assert (resent.status_code, resent.json()["error"]["code"]) == (409, "CONFLICT")

    @pytest.mark.parametrize(
        ("owner", "again"),
        [
            ("ada-{n}@example.com", "ADA-{n}+agent7@Example.com"),
            ("ada.love.{n}@gmail.com", "adalove{n}+x@googlemail.com"),
        ],
    )
    def test_a_known_mailbox_answers_like_a_new_sign_up_and_mails_the_owner(
        self, fake_smtp: FakeSmtp, http: httpx.Client, owner: str, again: str
    ) -> None:
        n = unique_email().split("@")[0].rsplit("-", 1)[1]
        owner, again = owner.format(n=n), again.format(n=n)
        sign_up_unconfirmed(http, fake_smtp, email=owner)

        response = http.post("/auth/signup", json={"email": again, "password": PASSWORD})

        assert response.status_code == 202
        assert response.json() == {
            "status": "verification_sent",
            "email": again.lower(),
            "message": "Check your inbox: the link in our e-mail confirms the address.",
        }
        note = fake_smtp.wait_for(owner, "Someone tried to sign up with your address")
        assert "/dashboard/forgot-password" in note.text
        assert "#t=" not in note.text  # no link that acts on the account
        refused = http.post("/auth/signin", json={"email": again, "password": PASSWORD})
        assert refused.status_code == 401  # no second account was made
        assert fake_smtp.messages(again.lower()) == []

    def test_sign_ups_of_one_mailbox_are_limited_per_hour(self, http: httpx.Client) -> None:
        base = unique_email()
        tagged = [base.replace("@", f"+{n}@") for n in range(4)]
        answers = [
            http.post("/auth/signup", json={"email": email, "password": PASSWORD})
            for email in tagged
        ]
        assert [a.status_code for a in answers] == [202, 202, 202, 429]
        assert answers[3].json()["error"]["retryAfterSeconds"] > 0


class TestPasswordReset:
    def test_any_address_gets_the_same_202_and_only_an_account_gets_a_link(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        account = confirmed_account(http, fake_smtp)
        stranger = unique_email()
        with new_client(mail_stack) as other:
            unknown = other.post("/auth/password-reset", json={"email": stranger})
            known = other.post("/auth/password-reset", json={"email": account.email.upper()})
        assert (unknown.status_code, known.status_code) == (202, 202)
        assert unknown.json() == known.json()
        assert "set-cookie" not in known.headers

        mail = fake_smtp.wait_for(account.email, "Reset your password")
        assert fake_smtp.messages(stranger) == []
        token = mail.token(RESET_PATH)
        weak = http.post(
            "/auth/password-reset/confirm", json={"token": token, "password": "password1"}
        )
        assert weak.status_code == 422  # a refused password leaves the link usable
        assert http.get("/me").status_code == 200

        with new_client(mail_stack) as browser:
            done = browser.post(
                "/auth/password-reset/confirm", json={"token": token, "password": NEW_PASSWORD}
            )
            assert done.status_code == 204, done.text
            reused = browser.post(
                "/auth/password-reset/confirm", json={"token": token, "password": NEW_PASSWORD}
            )
        assert reused.status_code == 422
        assert http.get("/me").status_code == 401  # every session ended
        old = http.post("/auth/signin", json={"email": account.email, "password": PASSWORD})
        assert old.status_code == 401
        assert sign_in(http, account.email, NEW_PASSWORD)["userId"] == account.user_id
        fake_smtp.wait_for(account.email, "Your password was changed")

    def test_a_reset_confirms_a_never_confirmed_account_and_revokes_its_keys(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        """Someone signed up with another person's address and made a key; the person
        takes the account over by resetting the password: the key dies with it."""
        email, _ = sign_up_unconfirmed(http, fake_smtp)
        squatter = sign_in(http, email)
        key_id = http.post("/api-keys", json={"name": "squatter"}).json()["key"]["keyId"]
        with new_client(mail_stack) as owner:
            assert owner.post("/auth/password-reset", json={"email": email}).status_code == 202
            token = fake_smtp.wait_for(email, "Reset your password").token(RESET_PATH)
            body = {"token": token, "password": NEW_PASSWORD}
            assert owner.post("/auth/password-reset/confirm", json=body).status_code == 204
            me = sign_in(owner, email, NEW_PASSWORD)
            assert (me["userId"], me["emailVerified"]) == (squatter["userId"], True)
            assert owner.get("/api-keys").json() == {"keys": []}
        assert key_id  # the squatter's session is gone too
        assert http.get("/me").status_code == 401

    def test_the_owner_of_a_mailbox_takes_back_an_account_made_with_a_variant_of_it(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        """A squatter signs up with owner+tag@: the owner's own sign-up is refused (one
        account per mailbox), so the owner's reset must reach that account. The link goes
        to the account's address, never to the one typed (a variant is not proof of the
        same inbox everywhere)."""
        owner_address = unique_email("owner")
        variant = owner_address.replace("@", "+squat@")
        sign_up_unconfirmed(http, fake_smtp, email=variant)
        squatter = sign_in(http, variant)
        assert http.post("/api-keys", json={"name": "squatter"}).status_code == 201
        with new_client(mail_stack) as owner:
            asked = owner.post("/auth/password-reset", json={"email": owner_address.upper()})
            assert asked.status_code == 202
            token = fake_smtp.wait_for(variant, "Reset your password").token(RESET_PATH)
            body = {"token": token, "password": NEW_PASSWORD}
            assert owner.post("/auth/password-reset/confirm", json=body).status_code == 204
            assert sign_in(owner, variant, NEW_PASSWORD)["userId"] == squatter["userId"]
            assert owner.get("/api-keys").json() == {"keys": []}
        assert fake_smtp.messages(owner_address) == []
        assert http.get("/me").status_code == 401

    def test_a_malformed_or_unknown_token_is_refused_without_a_500(
        self, http: httpx.Client
    ) -> None:
        for token in ("x", "A" * 43, "é" * 43, "../../etc"):
            body = {"token": token, "password": NEW_PASSWORD}
            response = http.post("/auth/password-reset/confirm", json=body)
            assert response.status_code == 422, (token, response.text)
            assert response.json()["error"]["code"] == "INVALID_ARGUMENT"
        too_long = http.post(
            "/auth/password-reset/confirm", json={"token": "A" * 300, "password": NEW_PASSWORD}
        )
        assert too_long.status_code == 422


class TestChangePassword:
    def test_needs_the_current_one_and_ends_the_other_sessions(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        account = confirmed_account(http, fake_smtp)
        with new_client(mail_stack) as elsewhere:
            sign_in(elsewhere, account.email)
            wrong = http.post(
                "/account/password",
                json={"currentPassword": "not it at all", "newPassword": NEW_PASSWORD},
            )
            assert wrong.status_code == 403
            assert wrong.json()["error"]["message"].startswith("currentPassword:")
            changed = http.post(
                "/account/password",
                json={"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD},
            )
            assert changed.status_code == 204, changed.text
            assert http.get("/me").status_code == 200  # this session stays
            assert elsewhere.get("/me").status_code == 401  # the other one ended
        assert sign_in(http, account.email, NEW_PASSWORD)["userId"] == account.user_id
        fake_smtp.wait_for(account.email, "Your password was changed")


class TestChangeEmail:
    def test_the_new_address_confirms_and_the_old_one_is_told(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        account = confirmed_account(http, fake_smtp)
        new = unique_email("moved")
        wrong = http.post("/account/email", json={"email": new, "currentPassword": "nope nope"})
        assert wrong.status_code == 403
        asked = http.post("/account/email", json={"email": new, "currentPassword": PASSWORD})
        assert asked.status_code == 202, asked.text
        assert asked.json()["email"] == new
        me = http.get("/me").json()
        assert (me["email"], me["pendingEmail"]) == (account.email, new)

        link = fake_smtp.wait_for(new, "Confirm your new e-mail address")
        with new_client(mail_stack) as other_browser:  # no session needed
            moved = other_browser.post(
                "/auth/email/confirm", json={"token": link.token(CONFIRM_PATH)}
            )
        assert moved.json() == {"email": new, "emailVerified": True}
        me = http.get("/me").json()
        assert (me["email"], me["pendingEmail"], me["emailVerified"]) == (new, None, True)
        told = fake_smtp.wait_for(account.email, "e-mail address was changed")
        assert new in told.text
        assert sign_in(http, new)["userId"] == account.user_id
        old = http.post("/auth/signin", json={"email": account.email, "password": PASSWORD})
        assert old.status_code == 401

    def test_an_address_of_another_account_gets_a_note_not_a_link(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        with new_client(mail_stack) as other:
            taken = confirmed_account(other, fake_smtp).email
        account = confirmed_account(http, fake_smtp)
        tagged = taken.replace("@", "+work@")
        asked = http.post("/account/email", json={"email": tagged, "currentPassword": PASSWORD})
        assert asked.status_code == 202
        note = fake_smtp.wait_for(tagged, "This address already has an account")
        assert "#t=" not in note.text
        me = http.get("/me").json()  # as for a free address: see test_address_change.py
        assert (me["email"], me["pendingEmail"]) == (account.email, tagged)


class TestDeleteAccount:
    async def test_keys_die_at_once_and_only_the_ledger_stays_under_the_id(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        account = confirmed_account(http, fake_smtp)
        key = http.post("/api-keys", json={"name": "Ada's laptop"}).json()["plaintext"]
        assert "error" not in await call_until(mail_stack, key, ok=True)
        deadline = time.monotonic() + 20
        while count(mail_stack, UsageEvent, account.user_id) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        wrong = http.post("/account/delete", json={"currentPassword": "not the password"})
        assert wrong.status_code == 403
        assert http.get("/me").status_code == 200

        deleted = http.post("/account/delete", json={"currentPassword": PASSWORD})

        assert deleted.status_code == 204, deleted.text
        assert "svc_session=" in deleted.headers["set-cookie"]  # cleared
        # The api process that deleted it refuses the key at once (others within 1 s).
        refused = raw_call(mail_stack.mcp_url, f"Bearer {key}")
        assert refused.status_code == 403
        assert "revoked" in refused.json()["error"]["message"]
        row = row_of(mail_stack, account.user_id)
        assert row.email == f"{account.user_id}@deleted.invalid"
        assert (row.name, row.mailbox, row.pending_email) == (None, None, None)
        assert row.deleted_at is not None
        assert "argon2" not in row.password_hash
        assert count(mail_stack, UsageEvent, account.user_id) == 1  # accounting keeps it
        assert count(mail_stack, EmailToken, account.user_id) == 0
        fake_smtp.wait_for(account.email, "Your account was deleted")
        gone = http.post("/auth/signin", json={"email": account.email, "password": PASSWORD})
        assert gone.status_code == 401
        again, _ = sign_up_unconfirmed(http, fake_smtp, email=account.email)  # a new account
        assert sign_in(http, again)["userId"] != account.user_id
