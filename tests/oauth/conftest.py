"""OAuth tests play an MCP host against a real server: `Host` does what a host does over
HTTP (discovery, registration, PKCE, code exchange, refresh, revocation), and
`approve` plays the person on the consent page with a signed-in cookie jar (the
browser tests use Playwright instead)."""

from __future__ import annotations

import base64
import hashlib
import html
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from tests.fakes.oauth_host import CallbackServer
from tests.support.factories import sign_up

MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
_CHALLENGE = re.compile(r'(\w+)="([^"]*)"')


def challenge_of(response: httpx.Response) -> dict[str, str]:
    """The parameters of a `WWW-Authenticate: Bearer k="v", ...` header."""
    header = response.headers["www-authenticate"]
    assert header.startswith("Bearer "), header
    return dict(_CHALLENGE.findall(header))


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def call_mcp(base_url: str, authorization: str | None, body: dict | None = None) -> httpx.Response:
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    return httpx.post(f"{base_url}/mcp", json=body or TOOLS_LIST, headers=headers, timeout=30)


@dataclass
class Host:
    """An MCP host's side of the flow, over plain HTTP."""

    base_url: str
    redirect_uri: str
    resource: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    client_id: str = ""
    client_secret: str | None = None
    verifier: str = ""
    state: str = ""

    def discover(self) -> None:
        """401 -> protected resource metadata -> authorization server metadata."""
        refused = call_mcp(self.base_url, None)
        assert refused.status_code == 401
        resource_metadata = httpx.get(challenge_of(refused)["resource_metadata"]).json()
        self.resource = resource_metadata["resource"]
        issuer = resource_metadata["authorization_servers"][0]
        self.metadata = httpx.get(f"{issuer}/.well-known/oauth-authorization-server").json()

    def register(self, **metadata: Any) -> httpx.Response:
        body = {
            "client_name": "Test Host",
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
            **metadata,
        }
        response = httpx.post(self.metadata["registration_endpoint"], json=body)
        if response.status_code == 201:
            self.client_id = response.json()["client_id"]
            self.client_secret = response.json().get("client_secret")
        return response

    def authorization_url(self, **overrides: str) -> str:
        self.verifier, challenge = pkce_pair()
        self.state = secrets.token_urlsafe(16)
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": "read:data",
            "state": self.state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": self.resource,
            **overrides,
        }
        params = {name: value for name, value in params.items() if value is not None}
        return f"{self.metadata['authorization_endpoint']}?{urlencode(params)}"

    def token(self, **form: str) -> httpx.Response:
        body = {"client_id": self.client_id, **form}
        return httpx.post(self.metadata["token_endpoint"], data=body)

    def exchange(self, code: str, **overrides: str) -> httpx.Response:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": self.verifier,
            "resource": self.resource,
            **overrides,
        }
        return self.token(**{k: v for k, v in form.items() if v is not None})

    def refresh(self, refresh_token: str) -> httpx.Response:
        return self.token(
            grant_type="refresh_token", refresh_token=refresh_token, resource=self.resource
        )

    def revoke(self, token: str) -> httpx.Response:
        body = {"client_id": self.client_id, "token": token}
        return httpx.post(self.metadata["revocation_endpoint"], data=body)


def consent_form(page: httpx.Response) -> dict[str, str]:
    return {name: html.unescape(value) for name, value in _HIDDEN.findall(page.text)}


def approve(person: httpx.Client, url: str, decision: str = "approve") -> dict[str, str]:
    """Open the authorization URL as the signed-in `person` and decide; the query the
    browser would carry back to the redirect URI."""
    page = person.get(url)
    assert page.status_code == 200, page.text
    answer = person.post("/authorize", data={**consent_form(page), "decision": decision})
    assert answer.status_code == 303, answer.text
    query = parse_qs(urlsplit(answer.headers["location"]).query)
    return {name: values[0] for name, values in query.items()}


@pytest.fixture
def callback() -> Iterator[CallbackServer]:
    server = CallbackServer().start()
    yield server
    server.stop()


@pytest.fixture
def person(live_server: Any) -> Iterator[httpx.Client]:
    """A signed-in account's cookie jar on the live server."""
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        sign_up(client)
        yield client


@pytest.fixture
def host(live_server: Any, callback: CallbackServer) -> Host:
    host = Host(live_server.url, callback.redirect_uri)
    host.discover()
    assert host.register().status_code == 201
    return host


def refused_within(base_url: str, authorization: str, deadline_s: float = 5.0) -> httpx.Response:
    """Poll /mcp until the credential is refused (revocation is honoured within ~1 s)."""
    deadline = time.monotonic() + deadline_s
    while True:
        response = call_mcp(base_url, authorization)
        if response.status_code != 200 or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def tokens_for(host: Host, person: httpx.Client) -> dict[str, Any]:
    """A full sign-in: consent, then the code exchanged."""
    answer = approve(person, host.authorization_url())
    response = host.exchange(answer["code"])
    assert response.status_code == 200, response.text
    return dict(response.json())
