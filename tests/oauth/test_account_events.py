"""OAuth grants end with the account's holder (issue 36, item 3): a password reset that
takes an account back, and an account's deletion, revoke every grant at once: refresh
tokens are refused from the commit on, access tokens by every api process within a
second (the same 1 s cache and Redis mark as API keys: app/oauth/verify.py).

A live api server with its worker mailing a real SMTP server on 127.0.0.1 (e-mail
verification on), an MCP host played over HTTP, and, for deletion, a second api process
over the same database answering as the same public URL (two replicas behind one load
balancer)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.oauth_host import CallbackServer
from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack
from tests.oauth.conftest import Host, approve, call_mcp, refused_within, tokens_for
from tests.support.factories import PASSWORD
from tests.support.live_server import LiveServer, launch_live_server, wait_until_healthy
from tests.support.mail_stack import RESET_PATH, confirmed_account, sign_in, sign_up_unconfirmed
from tests.users.test_mail_flows import NEW_PASSWORD, new_client


@pytest.fixture
def host(mail_stack: Stack, callback: CallbackServer) -> Host:
    host = Host(mail_stack.server.url, callback.redirect_uri)
    host.discover()
    assert host.register().status_code == 201
    return host


@pytest.fixture
def replica(mail_stack: Stack, tmp_path: Path) -> Iterator[LiveServer]:
    """A second api process: same database and Redis, same public URL."""
    server = launch_live_server(
        mail_stack.server.env, tmp_path / "replica.log", base_url=mail_stack.server.url
    )
    yield wait_until_healthy(server, deadline_s=60)
    server.stop()


def refused_refresh(host: Host, refresh_token: str) -> None:
    refused = host.refresh(refresh_token)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"] == "invalid_grant"


def test_a_squatters_grant_ends_with_the_owners_reset(
    mail_stack: Stack, fake_smtp: FakeSmtp, host: Host
) -> None:
    with new_client(mail_stack) as squatter, new_client(mail_stack) as owner:
        victim, _ = sign_up_unconfirmed(squatter, fake_smtp)
        sign_in(squatter, victim)
        tokens = tokens_for(host, squatter)
        access = f"Bearer {tokens['access_token']}"
        assert call_mcp(mail_stack.server.url, access).status_code == 200
        pending = approve(squatter, host.authorization_url())  # a code not yet exchanged

        assert owner.post("/auth/password-reset", json={"email": victim}).status_code == 202
        token = fake_smtp.wait_for(victim, "Reset your password").token(RESET_PATH)
        body = {"token": token, "password": NEW_PASSWORD}
        assert owner.post("/auth/password-reset/confirm", json=body).status_code == 204
        reset_at = time.monotonic()

        refused = refused_within(mail_stack.server.url, access, deadline_s=3)
        assert refused.status_code == 401
        assert time.monotonic() - reset_at < 1.5
        refused_refresh(host, tokens["refresh_token"])
        unexchanged = host.exchange(pending["code"])
        assert (unexchanged.status_code, unexchanged.json()["error"]) == (400, "invalid_grant")
        sign_in(owner, victim, NEW_PASSWORD)
        assert "Test Host" not in owner.get("/dashboard/apps").text


def test_deleting_the_account_ends_its_grants_on_every_api_process(
    mail_stack: Stack, fake_smtp: FakeSmtp, host: Host, replica: LiveServer
) -> None:
    with new_client(mail_stack) as person:
        confirmed_account(person, fake_smtp)
        first = tokens_for(host, person)
        refreshed = host.refresh(first["refresh_token"])
        assert refreshed.status_code == 200, refreshed.text
        tokens = refreshed.json()
        access = f"Bearer {tokens['access_token']}"
        assert call_mcp(replica.url, access).status_code == 200  # now in its cache

        deleted = person.post("/account/delete", json={"currentPassword": PASSWORD})
        assert deleted.status_code == 204, deleted.text
        deleted_at = time.monotonic()

        refused = refused_within(replica.url, access, deadline_s=3)
        assert refused.status_code == 401
        assert time.monotonic() - deleted_at < 1.5
        assert call_mcp(mail_stack.server.url, access).status_code == 401
        refused_refresh(host, tokens["refresh_token"])
