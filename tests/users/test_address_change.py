"""A move to another address tells nobody whether that address has an account (issue 36,
item 4): the answer, `GET /me` and the limits are the same for a taken and a free
address; only the mail differs (a link to a free address, a note to a taken one's owner).
Moves are limited per account and per client address.

End to end against a live api server, its worker and a real SMTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack
from tests.support.factories import PASSWORD, unique_email
from tests.support.mail_stack import confirmed_account
from tests.users.test_mail_flows import new_client

# A client address of its own (Linux answers on all of 127.0.0.0/8): the per-address
# limit counts only this test's requests.
CLIENT_ADDRESS = "127.0.0.36"


def ask_move(client: httpx.Client, to: str) -> httpx.Response:
    return client.post("/account/email", json={"email": to, "currentPassword": PASSWORD})


def observed(client: httpx.Client, to: str) -> tuple[int, dict, dict]:
    """What the person asking can see: the answer, and then `GET /me`, with the asked
    address (and the account's own) replaced by placeholders."""
    answer = ask_move(client, to)
    me = client.get("/me").json()
    own = me["email"]

    def blank(value: object) -> object:
        if isinstance(value, dict):
            return {name: blank(item) for name, item in value.items()}
        if isinstance(value, str):
            return value.replace(to.lower(), "<asked>").replace(own, "<own>")
        return value

    body = blank(answer.json())
    del me["userId"], me["user"]["id"]
    assert isinstance(body, dict)
    return answer.status_code, body, dict(blank(me))  # type: ignore[arg-type]


@pytest.fixture
def two_accounts(mail_stack: Stack, fake_smtp: FakeSmtp) -> Iterator[list[httpx.Client]]:
    with new_client(mail_stack) as first, new_client(mail_stack) as second:
        confirmed_account(first, fake_smtp)
        confirmed_account(second, fake_smtp)
        yield [first, second]


class TestTakenOrFree:
    def test_a_taken_address_and_a_free_one_look_alike(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, two_accounts: list[httpx.Client]
    ) -> None:
        with new_client(mail_stack) as other:
            taken = confirmed_account(other, fake_smtp).email.replace("@", "+work@")
        free = unique_email("free")
        first, second = two_accounts

        to_taken = observed(first, taken)
        to_free = observed(second, free)

        assert to_taken == to_free
        assert to_taken[0] == 202
        assert to_taken[2]["pendingEmail"] == "<asked>"
        note = fake_smtp.wait_for(taken, "This address already has an account")
        assert "#t=" not in note.text
        fake_smtp.wait_for(free, "Confirm your new e-mail address")


class TestLimits:
    def test_an_account_asks_a_few_moves_an_hour_taken_or_not(
        self, mail_stack: Stack, fake_smtp: FakeSmtp
    ) -> None:
        with new_client(mail_stack) as other:
            taken = confirmed_account(other, fake_smtp).email
        with new_client(mail_stack) as client:
            confirmed_account(client, fake_smtp)
            # Free and taken in turn, each a mailbox of its own or a +tag of the taken one.
            addresses = [
                unique_email("move") if n % 2 == 0 else taken.replace("@", f"+{n}@")
                for n in range(6)
            ]
            answers = [ask_move(client, to) for to in addresses]
        assert [a.status_code for a in answers] == [202] * 5 + [429]
        refused = answers[-1].json()["error"]
        assert refused["code"] == "RATE_LIMITED"
        assert refused["retryAfterSeconds"] > 0

    def test_one_client_address_asks_a_limited_number_of_moves(
        self, mail_stack: Stack, fake_smtp: FakeSmtp
    ) -> None:
        """Five accounts from one address: 20 moves an hour between them."""
        transport = httpx.HTTPTransport(local_address=CLIENT_ADDRESS)
        answers = []
        for _ in range(5):
            with new_client(mail_stack) as signing_up:
                confirmed_account(signing_up, fake_smtp)
                cookies = signing_up.cookies
            with httpx.Client(
                base_url=mail_stack.server.url, transport=transport, cookies=cookies, timeout=30
            ) as client:
                answers += [ask_move(client, unique_email("move")) for _ in range(5)]
        statuses = [a.status_code for a in answers]
        assert statuses[:20] == [202] * 20
        assert set(statuses[20:]) == {429}
        assert "network address" in answers[-1].json()["error"]["message"]
