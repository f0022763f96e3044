"""Issue 21, item 7: a new password is not a common one and not the e-mail (live server)."""

from __future__ import annotations

import httpx
import pytest

from tests.dashboard.test_pages import form_post
from tests.support.factories import PASSWORD, unique_email


def refused_password(response: httpx.Response, password: str) -> str:
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_ARGUMENT"
    assert error["field"] == "password"
    assert error["message"].startswith("password: ")
    assert password.lower() not in error["message"].lower()  # never echoed
    assert "svc_session" not in response.headers.get("set-cookie", "")
    return str(error["message"])


class TestCommonPasswords:
    # Ranks 28, 47, 46 and 3187 of the list; case does not matter.
    @pytest.mark.parametrize("password", ["1QAZ2WSX", "iloveyou", "SunShine", "BASEBALL1"])
    def test_sign_up_with_a_common_password_is_refused(
        self, http: httpx.Client, password: str
    ) -> None:
        response = http.post("/auth/signup", json={"email": unique_email(), "password": password})
        assert "most commonly used" in refused_password(response, password)

    def test_an_uncommon_password_is_accepted(self, http: httpx.Client) -> None:
        response = http.post("/auth/signup", json={"email": unique_email(), "password": PASSWORD})
        assert response.status_code == 201

    def test_dashboard_sign_up_shows_it_at_the_password_field(self, http: httpx.Client) -> None:
        response = form_post(
            http, "/dashboard/signup", {"email": unique_email(), "password": "iloveyou"}
        )
        assert response.status_code == 422
        assert '<p class="field-error" id="password-error">Is one of the most' in response.text
        assert "iloveyou" not in response.text


class TestPasswordBuiltOnTheEmail:
    def test_password_equal_to_the_email_is_refused(self, http: httpx.Client) -> None:
        email = unique_email()
        response = http.post("/auth/signup", json={"email": email, "password": email.upper()})
        assert "e-mail" in refused_password(response, email)

    def test_password_containing_the_local_part_is_refused(self, http: httpx.Client) -> None:
        email = unique_email("margaret")
        password = email.partition("@")[0] + "-2026!"
        response = http.post("/auth/signup", json={"email": email, "password": password})
        assert "e-mail" in refused_password(response, password)
