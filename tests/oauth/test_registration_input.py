"""What /register (RFC 7591) accepts, against a real server (issue 36, items 8 and 9):
metadata of the wrong type is a 400 in OAuth's envelope, never a 500, and a redirect
URI's host must be a host name or an IP literal (it is written into the consent page's
Content-Security-Policy)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.oauth.clients import ClientMetadataError, check_metadata
from app.oauth.redirects import registration_error

GOOD_URI = "https://app.example/callback"

WRONG_TYPES: list[dict[str, Any]] = [
    {"redirect_uris": 1},
    {"redirect_uris": [1]},
    {"redirect_uris": [None]},
    {"redirect_uris": [[GOOD_URI]]},
    {"redirect_uris": {"a": GOOD_URI}},
    {"redirect_uris": GOOD_URI},
    {"redirect_uris": []},
    {"scope": 5},
    {"scope": ["read:data"]},
    {"grant_types": 5},
    {"grant_types": "authorization_code"},
    {"grant_types": [5]},
    {"grant_types": [["authorization_code"]]},
    {"response_types": 5},
    {"response_types": [5]},
    {"logo_uri": 5},
    {"client_uri": 5},
    {"tos_uri": ["x"]},
    {"policy_uri": {}},
    {"contacts": 5},
    {"contacts": [5]},
    {"jwks_uri": 5},
    {"jwks": 5},
    {"software_id": 5},
    {"software_version": []},
    {"client_name": 5},
    {"client_name": ["x"]},
    {"token_endpoint_auth_method": 5},
    {"token_endpoint_auth_method": ["none"]},
    {"client_secret": 5},
]


def register(url: str, **metadata: Any) -> httpx.Response:
    body = {"redirect_uris": [GOOD_URI], "token_endpoint_auth_method": "none", **metadata}
    return httpx.post(f"{url}/register", json=body, timeout=30)


class TestWronglyTypedMetadata:
    @pytest.mark.parametrize("metadata", WRONG_TYPES, ids=lambda m: repr(m)[:40])
    def test_is_a_400_in_oauths_envelope(self, live_server: Any, metadata: dict) -> None:
        response = register(live_server.url, **metadata)

        assert response.status_code == 400, response.text
        body = response.json()
        assert body["error"] in ("invalid_client_metadata", "invalid_redirect_uri")
        assert body["error_description"]

    def test_well_typed_metadata_is_still_registered(self, live_server: Any) -> None:
        response = register(
            live_server.url,
            client_name="App",
            scope="read:data",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            logo_uri="https://app.example/logo.png",
            contacts=["ops@app.example"],
        )
        assert response.status_code == 201, response.text


BAD_HOSTS = [
    "https://a;script-src/cb",
    "https://*/cb",
    "https://*.example/cb",
    "https://a%20b.example/cb",
    "https://a'b.example/cb",
    "https://a,b.example/cb",
    'https://a"b.example/cb',
    "https://a(b).example/cb",
    "https://-a.example/cb",
    "https://a..example/cb",
    "https://[::1/cb",
    "https://[not-ip]/cb",
    "https://a_b.example:notaport/cb",
    "http://localhost;/cb",
]
GOOD_HOSTS = [
    "https://app.example/cb",
    "https://app.example:8443/cb?x=1",
    "https://APP.Example/cb",
    "https://xn--bcher-kva.example/cb",
    "https://a-b.c-d.example./cb",
    "https://192.0.2.1/cb",
    "https://[2001:db8::1]/cb",
    "http://127.0.0.1:4567/cb",
    "http://[::1]/cb",
    "http://localhost/cb",
    "cursor://anysphere.cursor-retrieval/oauth/callback",
    "com.example.app:/oauth2redirect",
]


class TestRedirectUriHosts:
    @pytest.mark.parametrize("uri", BAD_HOSTS)
    def test_a_host_that_is_not_a_host_name_is_refused(self, uri: str) -> None:
        assert registration_error(uri) is not None

    @pytest.mark.parametrize("uri", GOOD_HOSTS)
    def test_host_names_and_ip_literals_are_accepted(self, uri: str) -> None:
        assert registration_error(uri) is None

    @pytest.mark.parametrize("uri", ["https://a;script-src/cb", "https://*/cb"])
    def test_registration_refuses_it(self, live_server: Any, uri: str) -> None:
        response = register(live_server.url, redirect_uris=[uri])
        assert response.status_code == 400, response.text
        assert response.json()["error"] == "invalid_redirect_uri"

    @pytest.mark.parametrize("uri", ["https://a;script-src/cb", "https://*/cb"])
    def test_a_metadata_document_naming_it_is_refused(self, uri: str) -> None:
        document = {"client_name": "App", "redirect_uris": [uri]}
        with pytest.raises(ClientMetadataError, match="no valid host"):
            check_metadata(document, document=True)

    def test_a_metadata_document_of_the_wrong_types_is_refused(self) -> None:
        document = {"redirect_uris": [GOOD_URI], "grant_types": [["authorization_code"]]}
        with pytest.raises(ClientMetadataError, match="list of strings"):
            check_metadata(document, document=True)
