"""Where OAuth's error answers go (issue 36, items 7 and 9), against a real server.

Anyone can register a client with any https redirect URI, so an authorization error is
sent back to that URI (a 303 no one clicked) only for a client the signed-in person has
connected before; for any other, it is a page of ours naming where it was not sent.
Revoking another client's token answers 200 (RFC 7009) and revokes nothing."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.fakes.oauth_host import CallbackServer
from tests.oauth.conftest import Host, approve, call_mcp, tokens_for
from tests.support.live_server import LiveServer

# Errors found once the client and its redirect URI are known (before: a 303 there).
AFTER_THE_REDIRECT_URI = [
    ({"scope": "admin"}, "invalid_scope"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"resource": "https://other.example/mcp"}, "invalid_target"),
]


@pytest.fixture
def evil(live_server: LiveServer) -> Host:
    """A client registered by anyone, answering at a host nobody vetted."""
    host = Host(live_server.url, "https://evil.example/landing")
    host.discover()
    assert host.register(client_name="Totally Legit").status_code == 201
    return host


class TestClientsNobodyVetted:
    @pytest.mark.parametrize(("overrides", "error"), AFTER_THE_REDIRECT_URI)
    def test_a_signed_out_browser_gets_our_page_not_a_redirect(
        self, evil: Host, overrides: dict[str, str], error: str
    ) -> None:
        response = httpx.get(evil.authorization_url(**overrides), timeout=30)

        assert response.status_code == 400
        assert "location" not in response.headers
        assert error in response.text
        assert "evil.example" in response.text  # names where it was not sent

    @pytest.mark.parametrize(("overrides", "error"), AFTER_THE_REDIRECT_URI[:2])
    def test_a_person_who_never_connected_it_gets_our_page(
        self, evil: Host, person: httpx.Client, overrides: dict[str, str], error: str
    ) -> None:
        response = person.get(evil.authorization_url(**overrides))

        assert response.status_code == 400
        assert "location" not in response.headers
        assert error in response.text

    def test_once_connected_its_errors_go_back_to_it(
        self, host: Host, person: httpx.Client, live_server: LiveServer
    ) -> None:
        first = person.get(host.authorization_url(scope="admin"))
        assert first.status_code == 400  # not connected yet
        approve(person, host.authorization_url())

        response = person.get(host.authorization_url(scope="admin"))

        assert response.status_code == 303
        query = parse_qs(urlsplit(response.headers["location"]).query)
        assert query["error"] == ["invalid_scope"]
        assert query["state"] == [host.state]
        # someone else, signed in or not, still gets the page
        assert httpx.get(host.authorization_url(scope="admin"), timeout=30).status_code == 400


class TestRevokingAnotherClientsToken:
    def test_answers_200_and_revokes_nothing(
        self,
        host: Host,
        person: httpx.Client,
        live_server: LiveServer,
        callback: CallbackServer,
    ) -> None:
        tokens: dict[str, Any] = tokens_for(host, person)
        other = Host(live_server.url, callback.redirect_uri)
        other.discover()
        assert other.register(client_name="Other App").status_code == 201

        for token in (tokens["access_token"], tokens["refresh_token"]):
            response = other.revoke(token)
            assert response.status_code == 200, response.text

        assert call_mcp(live_server.url, f"Bearer {tokens['access_token']}").status_code == 200
        assert host.refresh(tokens["refresh_token"]).status_code == 200
