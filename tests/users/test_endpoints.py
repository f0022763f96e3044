from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import redis

from app.users.service import normalise_email
from app.users.throttle import failures_key
from tests.support.factories import PASSWORD, poll, sign_up, unique_email
from tests.support.fixtures import Backend
from tests.support.live_server import PRODUCTION_ENV, LiveServer, start_live_server


class TestSignUp:
    def test_creates_account_signs_in_and_returns_me(self, http: httpx.Client) -> None:
        email = unique_email()
        response = http.post(
            "/auth/signup", json={"email": email, "password": PASSWORD, "name": "Ada"}
        )
        assert response.status_code == 201
        me = response.json()
        assert me["userId"].startswith("usr_")
        assert me["email"] == email
        assert me["entitlements"] == {"hasSubscription": False}
        assert me["user"] == {"id": me["userId"], "name": "Ada", "email": email}
        assert http.get("/me").json() == me

    def test_cookie_is_httponly_lax_with_30_day_expiry(self, http: httpx.Client) -> None:
        response = http.post("/auth/signup", json={"email": unique_email(), "password": PASSWORD})
        cookie = response.headers["set-cookie"].lower()
        assert cookie.startswith("svc_session=")
        assert "httponly" in cookie
        assert "samesite=lax" in cookie
        assert "max-age=2592000" in cookie
        token = response.cookies["svc_session"]
        assert len(token) >= 43  # 256 bits, url-safe base64

    def test_duplicate_email_is_409(self, http: httpx.Client) -> None:
        email = unique_email()
        sign_up(http, email=email)
        response = http.post("/auth/signup", json={"email": email.upper(), "password": PASSWORD})
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "CONFLICT"

    @pytest.mark.parametrize(
        ("body", "code"),
        [
            ({"email": "not-an-email", "password": PASSWORD}, "INVALID_ARGUMENT"),
            ({"email": "short@example.com", "password": "1234567"}, "INVALID_ARGUMENT"),
            ({"email": "x@example.com"}, "INVALID_ARGUMENT"),
            ({"email": "x@example.com", "password": PASSWORD, "admin": True}, "INVALID_ARGUMENT"),
            ({"email": 5, "password": PASSWORD}, "INVALID_ARGUMENT"),
        ],
    )
    def test_bad_input_is_422(self, http: httpx.Client, body: dict, code: str) -> None:
        response = http.post("/auth/signup", json=body)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == code
        assert response.json()["error"]["message"]

    def test_malformed_json_is_422(self, http: httpx.Client) -> None:
        response = http.post(
            "/auth/signup", content=b'{"email": ', headers={"content-type": "application/json"}
        )
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "MALFORMED_JSON"


class TestSignIn:
    def test_right_password_signs_in(self, live_server: LiveServer) -> None:
        email = unique_email()
        with httpx.Client(base_url=live_server.url) as first:
            user = sign_up(first, email=email)
        with httpx.Client(base_url=live_server.url) as second:
            assert second.get("/me").status_code == 401
            response = second.post("/auth/signin", json={"email": email, "password": PASSWORD})
            assert response.status_code == 200
            assert response.json()["userId"] == user["userId"]
            assert second.get("/me").json()["userId"] == user["userId"]

    def test_wrong_password_and_unknown_email_look_the_same(self, http: httpx.Client) -> None:
        email = unique_email()
        sign_up(http, email=email)
        wrong = http.post("/auth/signin", json={"email": email, "password": "wrong-password"})
        unknown = http.post(
            "/auth/signin", json={"email": unique_email(), "password": "wrong-password"}
        )
        assert wrong.status_code == unknown.status_code == 401
        assert wrong.json() == unknown.json()

    def test_eleventh_failure_in_window_is_throttled(self, http: httpx.Client) -> None:
        email = unique_email()
        sign_up(http, email=email)
        for _ in range(10):
            bad = http.post("/auth/signin", json={"email": email, "password": "wrong-password"})
            assert bad.status_code == 401
        throttled = http.post("/auth/signin", json={"email": email, "password": PASSWORD})
        assert throttled.status_code == 429
        assert throttled.json()["error"]["code"] == "RATE_LIMITED"
        other = unique_email()
        sign_up(http, email=other)
        assert http.post("/auth/signin", json={"email": other, "password": PASSWORD}).is_success

    def test_failures_are_forgotten_after_15_minutes(
        self, http: httpx.Client, backend: Backend
    ) -> None:
        email = unique_email()
        sign_up(http, email=email)
        http.post("/auth/signin", json={"email": email, "password": "wrong-password"})

        store = redis.Redis.from_url(backend.redis_url)
        key = backend.key_prefix + failures_key(normalise_email(email), "127.0.0.1")
        assert store.get(key) == b"1"
        assert 15 * 60 - 5 <= store.ttl(key) <= 15 * 60


class TestSignOut:
    def test_signout_invalidates_the_session_on_the_server(self, http: httpx.Client) -> None:
        sign_up(http)
        token = http.cookies["svc_session"]
        assert http.post("/auth/signout").status_code == 204
        replay = httpx.get(f"{http.base_url}/me", cookies={"svc_session": token})
        assert replay.status_code == 401
        assert replay.json()["error"]["code"] == "UNAUTHENTICATED"


class TestControlPlaneAuth:
    def test_me_without_cookie_is_401(self, http: httpx.Client) -> None:
        response = http.get("/me")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"

    def test_bearer_header_is_not_accepted(self, http: httpx.Client) -> None:
        response = http.get("/me", headers={"Authorization": "Bearer svc_live_ak_abc_def"})
        assert response.status_code == 401

    def test_cross_site_state_change_is_403(self, http: httpx.Client) -> None:
        response = http.post(
            "/auth/signup",
            json={"email": unique_email(), "password": PASSWORD},
            headers={"Origin": "https://evil.example"},
        )
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "FORBIDDEN"

    def test_same_origin_state_change_is_allowed(self, http: httpx.Client) -> None:
        origin = str(http.base_url).rstrip("/")
        response = http.post(
            "/auth/signup",
            json={"email": unique_email(), "password": PASSWORD},
            headers={"Origin": origin},
        )
        assert response.status_code == 201


@pytest.fixture(scope="module")
def production_server(
    backend: Backend, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    log = tmp_path_factory.mktemp("logs") / f"production-{backend.name}.log"
    server = start_live_server(backend.env(**PRODUCTION_ENV), log)
    yield server
    server.stop()


class TestCookieOutsideDevelopment:
    def test_session_cookie_is_secure(self, production_server: LiveServer) -> None:
        """Production verifies e-mail: sign-up is 202 without a session; the account (made
        just after the answer) signs in before its address is confirmed."""
        email = unique_email()
        with httpx.Client(base_url=production_server.url) as client:
            signed_up = client.post("/auth/signup", json={"email": email, "password": PASSWORD})
            assert signed_up.status_code == 202
            assert "set-cookie" not in signed_up.headers
            body = {"email": email, "password": PASSWORD}
            response = poll(lambda: client.post("/auth/signin", json=body), until=200)
        assert response.json()["emailVerified"] is False
        cookie = response.headers["set-cookie"].lower()
        assert "svc_session=" in cookie
        assert "; secure" in cookie
        assert "httponly" in cookie


class TestErrorShape:
    @pytest.mark.parametrize(
        ("method", "path", "status", "code"),
        [
            ("GET", "/no-such-path", 404, "NOT_FOUND"),
            ("DELETE", "/me", 405, "METHOD_NOT_ALLOWED"),
        ],
    )
    def test_framework_errors_use_the_envelope(
        self, http: httpx.Client, method: str, path: str, status: int, code: str
    ) -> None:
        response = http.request(method, path)
        assert response.status_code == status
        assert response.json() == {
            "error": {"code": code, "message": response.json()["error"]["message"]}
        }

    @pytest.mark.parametrize(
        ("method", "path", "allowed"),
        [
            ("PATCH", "/subscription", "DELETE, GET, POST"),
            ("PUT", "/api-keys", "GET, POST"),
            ("DELETE", "/me", "GET"),
        ],
    )
    def test_405_allows_every_method_of_the_path(
        self, http: httpx.Client, method: str, path: str, allowed: str
    ) -> None:
        """Not only those of the first route matched (FastAPI has one route per method)."""
        response = http.request(method, path)

        assert response.status_code == 405
        assert response.headers["allow"] == allowed
