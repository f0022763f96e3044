"""Issue 21, item 7: failed sign-ins of one account from many addresses earn a backoff,
not a lockout. The live server trusts X-Forwarded-For from 127.0.0.1 (the tests'
GEOSVC_FORWARDED_ALLOW_IPS); defaults: from the 10th failure a
pause of 1 s, doubling."""

from __future__ import annotations

import secrets
import time

import httpx

from tests.support.factories import PASSWORD, sign_up, unique_email


def addresses(count: int) -> list[dict[str, str]]:
    """X-Forwarded-For headers of `count` distinct addresses in a random /24."""
    net = f"198.51.{secrets.randbelow(250)}"
    return [{"X-Forwarded-For": f"{net}.{host}"} for host in range(1, count + 1)]


def fail_ten_times(http: httpx.Client, email: str) -> None:
    for address in addresses(10):
        wrong = {"email": email, "password": "wrong-password"}
        assert http.post("/auth/signin", json=wrong, headers=address).status_code == 401


def sign_in(http: httpx.Client, email: str, address: dict[str, str]) -> httpx.Response:
    return http.post("/auth/signin", json={"email": email, "password": PASSWORD}, headers=address)


def sign_in_once_the_pause_ends(
    http: httpx.Client, email: str, address: dict[str, str]
) -> httpx.Response:
    deadline = time.monotonic() + 15
    while True:
        response = sign_in(http, email, address)
        if response.status_code != 429 or time.monotonic() > deadline:
            return response
        time.sleep(0.1)


class TestAccountBackoff:
    def test_failures_from_ten_addresses_pause_the_account_then_the_password_works(
        self, http: httpx.Client
    ) -> None:
        email = unique_email()
        sign_up(http, email=email)
        fail_ten_times(http, email)
        newcomer = addresses(1)[0]

        refused = sign_in(http, email, newcomer)  # the right password, a fresh address

        assert refused.status_code == 429
        error = refused.json()["error"]
        assert error["code"] == "RATE_LIMITED"
        assert "this account" in error["message"]
        assert 1 <= error["retryAfterSeconds"] <= 60
        assert refused.headers["Retry-After"] == str(error["retryAfterSeconds"])
        assert "svc_session" not in refused.headers.get("set-cookie", "")

        after = sign_in_once_the_pause_ends(http, email, newcomer)
        assert after.status_code == 200, after.text
        assert http.get("/me").json()["email"] == email

    def test_another_account_is_unaffected(self, http: httpx.Client) -> None:
        email, other = unique_email(), unique_email()
        sign_up(http, email=email)
        sign_up(http, email=other)
        fail_ten_times(http, email)
        assert sign_in(http, other, addresses(1)[0]).status_code == 200

    def test_each_further_failure_doubles_the_pause(self, http: httpx.Client) -> None:
        email = unique_email()
        sign_up(http, email=email)
        fail_ten_times(http, email)
        address = addresses(1)[0]
        deadline = time.monotonic() + 15
        wrong = {"email": email, "password": "wrong-password"}
        response = http.post("/auth/signin", json=wrong, headers=address)
        while response.status_code == 429:
            assert time.monotonic() < deadline
            time.sleep(0.1)
            response = http.post("/auth/signin", json=wrong, headers=address)
        assert response.status_code == 401  # let through after 1 s, and wrong again

        refused = sign_in(http, email, address)

        assert refused.status_code == 429
        assert refused.json()["error"]["retryAfterSeconds"] == 2

    def test_an_address_the_owner_signed_in_from_is_not_paused(self, http: httpx.Client) -> None:
        email = unique_email()
        sign_up(http, email=email)
        home = {"X-Forwarded-For": f"192.0.2.{secrets.randbelow(250) + 1}"}
        assert sign_in(http, email, home).status_code == 200
        fail_ten_times(http, email)

        assert sign_in(http, email, addresses(1)[0]).status_code == 429
        assert sign_in(http, email, home).status_code == 200
