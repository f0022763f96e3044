"""The security rules of the OAuth sign-in, each against a real server: redirect URIs,
open redirects, PKCE, state, codes, refresh rotation, resource binding, consent CSRF and
framing, and what /mcp answers each kind of credential."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.fakes.oauth_host import CallbackServer
from tests.oauth.conftest import (
    Host,
    approve,
    call_mcp,
    challenge_of,
    consent_form,
    refused_within,
    tokens_for,
)
from tests.support.live_server import LiveServer


class TestDiscovery:
    def test_no_credentials_is_401_pointing_at_the_resource_metadata(
        self, live_server: LiveServer
    ) -> None:
        response = call_mcp(live_server.url, None)

        assert response.status_code == 401
        challenge = challenge_of(response)
        assert challenge["resource_metadata"] == (
            f"{live_server.url}/.well-known/oauth-protected-resource/mcp"
        )
        assert challenge["scope"] == "read:data"
        assert "OAuth" in response.json()["error"]["message"]  # a reason a person can read

    def test_metadata_documents(self, live_server: LiveServer) -> None:
        resource = httpx.get(f"{live_server.url}/.well-known/oauth-protected-resource/mcp")
        root = httpx.get(f"{live_server.url}/.well-known/oauth-protected-resource")
        server = httpx.get(f"{live_server.url}/.well-known/oauth-authorization-server").json()

        assert resource.json() == root.json()
        assert resource.json()["resource"] == f"{live_server.url}/mcp"
        assert resource.json()["authorization_servers"] == [live_server.url]
        assert resource.headers["access-control-allow-origin"] == "*"
        assert server["issuer"] == live_server.url
        assert server["code_challenge_methods_supported"] == ["S256"]
        assert server["client_id_metadata_document_supported"] is True
        assert server["authorization_response_iss_parameter_supported"] is True
        assert set(server["grant_types_supported"]) == {"authorization_code", "refresh_token"}


class TestBearerOnMcp:
    def test_a_wrong_api_key_keeps_the_readable_403(self, live_server: LiveServer) -> None:
        response = call_mcp(live_server.url, "Bearer svc_live_ak_unknownkey123_" + "A" * 40)

        assert response.status_code == 403
        assert "www-authenticate" not in response.headers
        assert response.json()["error"]["message"] == "Invalid API key"

    @pytest.mark.parametrize("token", ["not-a-token", "svc_at_" + "x" * 43])
    def test_an_unknown_token_is_401_invalid_token(
        self, live_server: LiveServer, token: str
    ) -> None:
        response = call_mcp(live_server.url, f"Bearer {token}")

        assert response.status_code == 401
        assert challenge_of(response)["error"] == "invalid_token"
        assert "resource_metadata" in challenge_of(response)

    def test_a_token_in_the_url_is_refused(self, live_server: LiveServer, host: Host) -> None:
        response = httpx.post(f"{live_server.url}/mcp?access_token=svc_at_abc", json={}, headers={})
        assert response.status_code == 400
        refresh = httpx.post(f"{live_server.url}/token?refresh_token=svc_rt_abc")
        assert refresh.status_code == 400


class TestRegistration:
    @pytest.mark.parametrize(
        "uri",
        [
            "http://example.com/callback",  # plain http off loopback
            "javascript:alert(1)",
            "https://example.com/cb#fragment",
            "https://user@example.com/cb",
            "data:text/html,hi",
        ],
    )
    def test_unsafe_redirect_uris_are_refused(self, host: Host, uri: str) -> None:
        response = host.register(redirect_uris=[uri])

        assert response.status_code == 400
        assert response.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")

    def test_a_name_with_bidi_controls_is_refused(self, host: Host) -> None:
        response = host.register(client_name="Goo\u202egle")
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_client_metadata"

    def test_a_confidential_client_gets_a_secret_that_is_checked(
        self, host: Host, person: httpx.Client
    ) -> None:
        assert host.register(token_endpoint_auth_method="client_secret_post").status_code == 201
        assert host.client_secret
        code = approve(person, host.authorization_url())["code"]

        without = host.exchange(code)
        assert without.status_code in (400, 401)
        code = approve(person, host.authorization_url())["code"]
        wrong = host.exchange(code, client_secret="wrong-secret")
        assert wrong.status_code in (400, 401)
        code = approve(person, host.authorization_url())["code"]
        right = host.exchange(code, client_secret=host.client_secret)
        assert right.status_code == 200, right.text


class TestAuthorizationRequest:
    def test_an_unregistered_redirect_uri_is_a_page_never_a_redirect(
        self, host: Host, person: httpx.Client
    ) -> None:
        for uri in (
            "https://evil.example/callback",
            host.redirect_uri + "/other",
            host.redirect_uri.replace("127.0.0.1", "localhost"),
        ):
            response = person.get(host.authorization_url(redirect_uri=uri))
            assert response.status_code == 400, uri
            assert "location" not in response.headers
            assert "not supported by client" in response.text

    def test_an_unknown_client_is_a_page_never_a_redirect(
        self, host: Host, person: httpx.Client
    ) -> None:
        response = person.get(host.authorization_url(client_id="mcp_nosuchclient"))
        assert response.status_code == 400
        assert "location" not in response.headers

    def test_loopback_redirects_match_on_any_port(self, host: Host, person: httpx.Client) -> None:
        other_port = host.redirect_uri.replace(str(urlsplit(host.redirect_uri).port), "1")
        answer = approve(person, host.authorization_url(redirect_uri=other_port))
        assert host.exchange(answer["code"], redirect_uri=other_port).status_code == 200

    @pytest.mark.parametrize(
        ("overrides", "error"),
        [
            ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
            ({"code_challenge_method": "plain"}, "invalid_request"),
            ({"scope": "write:everything"}, "invalid_scope"),
            ({"resource": "https://other.example/mcp"}, "invalid_target"),
            ({"response_type": "token"}, "unsupported_response_type"),
        ],
    )
    def test_errors_after_the_redirect_uri_is_known_go_back_with_state_and_iss(
        self, host: Host, person: httpx.Client, overrides: dict, error: str
    ) -> None:
        approve(person, host.authorization_url())  # only a connected client's (issue 36)
        response = person.get(host.authorization_url(**overrides))

        assert response.status_code == 303
        location = response.headers["location"]
        assert location.startswith(host.redirect_uri + "?")
        query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        assert query["error"] == error
        assert query["state"] == host.state
        assert query["iss"] == host.metadata["issuer"]

    def test_declining_sends_access_denied_back(self, host: Host, person: httpx.Client) -> None:
        answer = approve(person, host.authorization_url(), decision="deny")
        assert answer["error"] == "access_denied"
        assert answer["state"] == host.state
        assert "code" not in answer


class TestConsentPage:
    def test_it_cannot_be_framed(self, host: Host, person: httpx.Client) -> None:
        page = person.get(host.authorization_url())

        assert page.headers["x-frame-options"] == "DENY"
        csp = page.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp
        origin = host.redirect_uri.rsplit("/", 1)[0]
        assert f"form-action 'self' {origin}" in csp  # and nowhere else

    def test_a_forged_or_altered_form_is_refused(self, host: Host, person: httpx.Client) -> None:
        page = person.get(host.authorization_url())
        form = {**consent_form(page), "decision": "approve"}

        for forged in (
            {**form, "signature": "0" * 64},
            {**form, "redirect_uri": host.redirect_uri.replace("/callback", "/other")},
            {**form, "state": "attacker-state"},
        ):
            response = person.post("/authorize", data=forged)
            assert response.status_code == 403
            assert "location" not in response.headers

    def test_another_sessions_form_is_refused(
        self, host: Host, person: httpx.Client, live_server: LiveServer
    ) -> None:
        """CSRF: a form signed for one session does nothing in another person's browser."""
        form = {**consent_form(person.get(host.authorization_url())), "decision": "approve"}
        from tests.support.factories import sign_up

        with httpx.Client(base_url=live_server.url) as victim:
            sign_up(victim)
            response = victim.post("/authorize", data=form)
        assert response.status_code == 403

    def test_a_cross_site_post_is_refused(self, host: Host, person: httpx.Client) -> None:
        form = {**consent_form(person.get(host.authorization_url())), "decision": "approve"}
        response = person.post("/authorize", data=form, headers={"Origin": "https://evil.example"})
        assert response.status_code == 403

    def test_signed_out_it_asks_to_sign_in_and_comes_back(
        self, host: Host, live_server: LiveServer
    ) -> None:
        url = host.authorization_url()
        with httpx.Client(base_url=live_server.url) as browser:
            response = browser.get(url)
            assert response.status_code == 303
            assert response.headers["location"].startswith("/dashboard/signin?next=%2Fauthorize")
            # a `next` elsewhere is ignored: sign-in never sends anyone off-site
            page = browser.get("/dashboard/signin", params={"next": "https://evil.example/"})
            assert 'name="next"' not in page.text


def at_once(n: int, request: Callable[[], httpx.Response]) -> list[httpx.Response]:
    """`request` from n threads released together."""
    start = threading.Barrier(n)

    def one() -> httpx.Response:
        start.wait(timeout=10)
        return request()

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(lambda _: one(), range(n)))


class TestCodes:
    def test_pkce_is_verified(self, host: Host, person: httpx.Client) -> None:
        code = approve(person, host.authorization_url())["code"]
        wrong = host.exchange(code, code_verifier="x" * 50)
        assert wrong.status_code == 400
        assert wrong.json()["error"] == "invalid_grant"

        code = approve(person, host.authorization_url())["code"]
        missing = host.exchange(code, code_verifier=None)
        assert missing.status_code == 400

    def test_a_code_works_once_and_a_second_use_revokes_its_tokens(
        self, host: Host, person: httpx.Client, live_server: LiveServer
    ) -> None:
        code = approve(person, host.authorization_url())["code"]
        first = host.exchange(code)
        assert first.status_code == 200
        access = f"Bearer {first.json()['access_token']}"
        assert call_mcp(live_server.url, access).status_code == 200

        second = host.exchange(code)

        assert second.status_code == 400
        assert second.json()["error"] == "invalid_grant"
        assert refused_within(live_server.url, access).status_code == 401

    def test_a_code_presented_several_times_at_once_gives_no_working_token(
        self, host: Host, person: httpx.Client, live_server: LiveServer
    ) -> None:
        for _ in range(3):  # the interleaving varies; the outcome must not
            code = approve(person, host.authorization_url())["code"]
            answers = at_once(4, lambda code=code: host.exchange(code))
            assert any(a.status_code == 400 for a in answers), [a.text for a in answers]
            for answer in answers:
                if answer.status_code == 200:  # withdrawn: its token no longer works
                    access = f"Bearer {answer.json()['access_token']}"
                    assert refused_within(live_server.url, access).status_code == 401

    def test_a_code_is_bound_to_its_client_and_redirect_uri(
        self, host: Host, person: httpx.Client, callback: CallbackServer
    ) -> None:
        code = approve(person, host.authorization_url())["code"]
        other = Host(host.base_url, callback.redirect_uri, host.resource, host.metadata)
        assert other.register().status_code == 201
        other.verifier = host.verifier
        assert other.exchange(code).status_code == 400
        code = approve(person, host.authorization_url())["code"]
        moved = host.exchange(code, redirect_uri=host.redirect_uri + "/x")
        assert moved.status_code == 400

    def test_a_token_for_another_resource_is_refused(
        self, host: Host, person: httpx.Client
    ) -> None:
        code = approve(person, host.authorization_url())["code"]
        response = host.exchange(code, resource="https://other.example/mcp")
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_target"


class TestRefresh:
    def test_rotation_and_reuse_detection(
        self, host: Host, person: httpx.Client, live_server: LiveServer
    ) -> None:
        tokens = tokens_for(host, person)
        rotated = host.refresh(tokens["refresh_token"])
        assert rotated.status_code == 200, rotated.text
        new = rotated.json()
        assert new["refresh_token"] != tokens["refresh_token"]
        assert call_mcp(live_server.url, f"Bearer {new['access_token']}").status_code == 200

        reused = host.refresh(tokens["refresh_token"])  # a stolen, already used one

        assert reused.status_code == 400
        assert reused.json()["error"] == "invalid_grant"
        refused = refused_within(live_server.url, f"Bearer {new['access_token']}")
        assert refused.status_code == 401
        assert host.refresh(new["refresh_token"]).status_code == 400

    def test_a_refresh_token_presented_several_times_at_once_gives_no_working_token(
        self, host: Host, person: httpx.Client, live_server: LiveServer
    ) -> None:
        for _ in range(3):
            tokens = tokens_for(host, person)
            answers = at_once(4, lambda old=tokens["refresh_token"]: host.refresh(old))
            assert any(a.status_code == 400 for a in answers), [a.text for a in answers]
            issued = [a.json() for a in answers if a.status_code == 200]
            for token in [tokens, *issued]:
                access = f"Bearer {token['access_token']}"
                assert refused_within(live_server.url, access).status_code == 401
                assert host.refresh(token["refresh_token"]).status_code == 400

    def test_revoking_a_refresh_token_ends_its_access_tokens(
        self, host: Host, person: httpx.Client, live_server: LiveServer
    ) -> None:
        tokens = tokens_for(host, person)
        assert host.revoke(tokens["refresh_token"]).status_code == 200
        refused = refused_within(live_server.url, f"Bearer {tokens['access_token']}")
        assert refused.status_code == 401
        assert challenge_of(refused)["error"] == "invalid_token"
        assert host.revoke("svc_rt_unknown").status_code == 200  # RFC 7009: no oracle


def test_revocation_is_seen_within_a_second(
    host: Host, person: httpx.Client, live_server: LiveServer
) -> None:
    tokens = tokens_for(host, person)
    access = f"Bearer {tokens['access_token']}"
    assert call_mcp(live_server.url, access).status_code == 200  # cached now
    assert host.revoke(tokens["access_token"]).status_code == 200
    revoked_at = time.monotonic()

    response = refused_within(live_server.url, access, deadline_s=3)

    assert response.status_code == 401
    assert time.monotonic() - revoked_at < 1.5


class TestOddInput:
    """No 500 on bad input: Authlib quotes some values in its error descriptions."""

    @pytest.mark.parametrize(
        "overrides",
        [
            {"redirect_uri": 'https://x.example/"cb'},
            {"response_type": 'co"de'},
            {"client_id": "mcp_\u00e9\\"},
            {"scope": "read:data\x00"},
            {"state": 'any "state" \u00e9 is echoed'},
        ],
    )
    def test_the_authorization_endpoint(
        self, host: Host, person: httpx.Client, overrides: dict
    ) -> None:
        response = person.get(host.authorization_url(**overrides))
        assert response.status_code in (200, 303, 400), response.text

    @pytest.mark.parametrize(
        "form",
        [{"grant_type": 'auth"code'}, {"grant_type": "refresh_token", "client_id": "\u00e9"}],
    )
    def test_the_token_endpoint(self, host: Host, form: dict) -> None:
        response = host.token(**form)
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_request"

    def test_the_registration_endpoint(self, host: Host) -> None:
        for body in (b"[]", b"{not json", b'{"redirect_uris": "x"}', b"{}"):
            response = httpx.post(host.metadata["registration_endpoint"], content=body)
            assert response.status_code == 400, body
