"""Dashboard pages as a browser uses them: HTML forms posted same-origin, both backends."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx
import pytest

from app.dashboard.usage_page import CHART_HEIGHT, y_ticks
from app.kit.clock import period_end, period_of, period_start, utcnow
from tests.support.factories import PASSWORD, sign_up, unique_email

PLAINTEXT = re.compile(r"svc_live_ak_[a-z0-9]{16}_[A-Za-z0-9]{32,}")


def same_origin(client: httpx.Client) -> dict[str, str]:
    return {"Origin": str(client.base_url).rstrip("/")}


def form_post(
    client: httpx.Client, path: str, data: dict[str, str] | None = None
) -> httpx.Response:
    return client.post(path, data=data or {}, headers=same_origin(client))


class TestSignedOut:
    @pytest.mark.parametrize(
        "path",
        [
            "/",
            "/dashboard/keys",
            "/dashboard/usage",
            "/dashboard/calls",
            "/dashboard/subscription",
            "/dashboard/billing",
            "/billing/checkout/chk_x",
        ],
    )
    def test_pages_send_you_to_sign_in(self, http: httpx.Client, path: str) -> None:
        response = http.get(path)
        assert response.status_code == 303
        assert response.headers["location"] == "/dashboard/signin"

    def test_sign_in_and_sign_up_pages(self, http: httpx.Client) -> None:
        for path, action in [("/dashboard/signin", "signin"), ("/dashboard/signup", "signup")]:
            page = http.get(path)
            assert page.status_code == 200
            assert page.headers["content-type"].startswith("text/html")
            assert f'action="/dashboard/{action}"' in page.text


class TestAccountForms:
    def test_sign_up_then_home_shows_usage_and_plan(self, http: httpx.Client) -> None:
        response = form_post(
            http,
            "/dashboard/signup",
            {"email": unique_email(), "password": PASSWORD, "name": "Ada <b>"},
        )
        assert response.status_code == 303
        assert response.headers["location"] == "/"

        home = http.get("/")

        assert home.status_code == 200
        assert f"Usage in {period_start(period_of(utcnow())):%B %Y}" in home.text
        assert '<span class="big" data-testid="used">0</span>' in home.text
        assert "of 1,000 credits" in home.text
        assert "Hello, Ada &lt;b&gt;" in home.text  # escaped
        assert '<span class="pill">free</span> plan · no subscription' in home.text
        assert "subscription no subscription" not in home.text

    @pytest.mark.parametrize("cap", ["9" * 5000, "²", "0", "1000000001"])
    def test_a_cap_that_is_no_whole_number_in_range_is_a_field_error(
        self, http: httpx.Client, cap: str
    ) -> None:
        """5,000 digits raised in int() (a 500); "²" passes str.isdigit()."""
        sign_up(http)
        response = form_post(http, "/dashboard/usage/cap", {"cap": cap})
        assert response.status_code == 422, response.text[:200]
        assert "Enter a whole number of credits" in response.text

    def test_bad_sign_up_shows_each_field_error_and_keeps_what_was_typed(
        self, http: httpx.Client
    ) -> None:
        response = form_post(
            http, "/dashboard/signup", {"email": "nope", "password": "short", "name": "Ada"}
        )
        assert response.status_code == 422
        assert 'role="alert"' in response.text
        assert "svc_session" not in response.headers.get("set-cookie", "")
        assert '<p class="field-error" id="email-error">Enter a valid e-mail' in response.text
        assert '<p class="field-error" id="password-error">Use at least 8' in response.text
        assert 'name="email" type="email" value="nope"' in response.text
        assert 'name="name" type="text" value="Ada"' in response.text
        assert "short" not in response.text  # the password is never sent back

    def test_taken_e_mail_is_an_error_on_the_e_mail_field(self, http: httpx.Client) -> None:
        email = unique_email()
        with httpx.Client(base_url=http.base_url) as other:
            sign_up(other, email=email)
        response = form_post(http, "/dashboard/signup", {"email": email, "password": PASSWORD})
        assert response.status_code == 409
        assert 'id="email-error">An account with this e-mail already exists' in response.text
        assert f'value="{email}"' in response.text

    def test_sign_in_wrong_then_right_then_out(self, http: httpx.Client) -> None:
        email = unique_email()
        with httpx.Client(base_url=http.base_url) as other:
            sign_up(other, email=email)

        wrong = form_post(http, "/dashboard/signin", {"email": email, "password": "wrong-pass"})
        assert wrong.status_code == 401
        assert "Wrong e-mail or password" in wrong.text
        assert f'value="{email}"' in wrong.text
        malformed = form_post(http, "/dashboard/signin", {"email": "x@", "password": ""})
        assert malformed.status_code == 422
        assert 'id="email-error">Enter a valid e-mail address' in malformed.text
        assert 'id="password-error">Must not be empty.' in malformed.text

        right = form_post(http, "/dashboard/signin", {"email": email, "password": PASSWORD})
        assert right.status_code == 303
        assert http.get("/").status_code == 200

        out = form_post(http, "/dashboard/signout")
        assert out.status_code == 303
        assert http.get("/").status_code == 303


class TestKeysPage:
    def test_create_shows_the_plaintext_once_then_revoke(self, http: httpx.Client) -> None:
        sign_up(http)

        created = form_post(http, "/dashboard/keys", {"name": "notebook"})

        assert created.status_code == 201
        plaintexts = PLAINTEXT.findall(created.text)
        assert len(set(plaintexts)) == 1  # the key, and the client config that carries it
        assert f"&#34;Bearer {plaintexts[0]}&#34;" in created.text
        curl = created.text.split('id="curl-example">', 1)[1].split("</pre>", 1)[0]
        assert "/v1/geocode?query=Austin,%20TX" in curl
        assert f"Authorization: Bearer {plaintexts[0]}" in curl
        key_id = plaintexts[0].split("_")[3]
        listing = http.get("/dashboard/keys")
        assert key_id in listing.text
        assert plaintexts[0] not in listing.text
        assert http.get("/api-keys").json()["keys"][0]["name"] == "notebook"

        revoked = form_post(http, f"/dashboard/keys/{key_id}/revoke")

        assert revoked.status_code == 303
        assert http.get("/api-keys").json() == {"keys": []}
        assert form_post(http, f"/dashboard/keys/{key_id}/revoke").headers["location"] == (
            "/dashboard/keys?notice=key_gone"
        )

    def test_a_test_mode_key_is_created_and_listed_with_its_environment(
        self, http: httpx.Client
    ) -> None:
        """Issue 57, item 1: the page creates either environment and shows each key's."""
        sign_up(http)

        created = form_post(http, "/dashboard/keys", {"name": "ci", "env": "test"})
        live = form_post(http, "/dashboard/keys", {"name": "prod"})
        listing = http.get("/dashboard/keys").text

        assert created.status_code == 201
        assert re.search(r"svc_test_ak_[a-z0-9]{16}_[A-Za-z0-9]{32,}", created.text)
        assert live.status_code == 201
        assert 'name="env" value="test"' in listing
        envs = {k["name"]: k["env"] for k in http.get("/api-keys").json()["keys"]}
        assert envs == {"ci": "test", "prod": "live"}
        cells = re.findall(r'data-testid="env"><span class="pill[^"]*">(\w+)</span>', listing)
        assert sorted(cells) == ["live", "test"]
        usage_page = http.get("/dashboard/usage").text
        assert 'data-testid="test-used">0</strong> of 10,000' in usage_page

    def test_an_expiry_date_on_creation_and_a_past_one_refused(self, http: httpx.Client) -> None:
        sign_up(http)
        day = utcnow().date() + timedelta(days=10)

        created = form_post(http, "/dashboard/keys", {"name": "ci", "expires_on": day.isoformat()})
        refused = form_post(http, "/dashboard/keys", {"name": "x", "expires_on": "2020-01-01"})
        garbled = form_post(http, "/dashboard/keys", {"name": "x", "expires_on": "soon"})

        assert created.status_code == 201
        assert f"{day:%-d %b %Y}, 00:00 UTC" in created.text
        (key,) = http.get("/api-keys").json()["keys"]
        assert key["expiresAt"] == f"{day.isoformat()}T00:00:00.000Z"
        assert refused.status_code == 422
        assert 'id="expires_on-error">Pick a day after today (UTC).' in refused.text
        assert 'value="2020-01-01"' in refused.text  # what was typed stays
        assert garbled.status_code == 422
        assert 'id="expires_on-error">Enter a date like 2026-12-31.' in garbled.text

    def test_edit_renames_and_sets_the_expiry(self, http: httpx.Client) -> None:
        sign_up(http)
        key_id = http.post("/api-keys", json={"name": "old"}).json()["key"]["keyId"]
        day = utcnow().date() + timedelta(days=3)

        saved = form_post(
            http,
            f"/dashboard/keys/{key_id}",
            {"name": "new", "expires_on": day.isoformat(), "has_expiry_field": "1"},
        )
        bad = form_post(http, f"/dashboard/keys/{key_id}", {"name": ""})
        gone = form_post(http, "/dashboard/keys/0123456789abcdef", {"name": "x"})

        assert saved.status_code == 303
        assert saved.headers["location"] == "/dashboard/keys?notice=key_saved"
        (key,) = http.get("/api-keys").json()["keys"]
        assert (key["name"], key["expiresAt"]) == ("new", f"{day.isoformat()}T00:00:00.000Z")
        assert bad.status_code == 422
        assert f'id="key-{key_id}-name-error">Must be 1 to 64 characters' in bad.text
        assert '<details class="edit" open>' in bad.text
        assert gone.headers["location"] == "/dashboard/keys?notice=key_gone"
        renamed_only = form_post(http, f"/dashboard/keys/{key_id}", {"name": "newer"})
        assert renamed_only.status_code == 303  # without the date field the expiry stays
        assert http.get("/api-keys").json()["keys"][0]["expiresAt"] == key["expiresAt"]

    def test_empty_name_re_renders_with_the_error(self, http: httpx.Client) -> None:
        sign_up(http)
        response = form_post(http, "/dashboard/keys", {"name": "  "})
        assert response.status_code == 422
        assert 'id="name-error">Must be 1 to 64 characters' in response.text
        assert http.get("/api-keys").json() == {"keys": []}

    def test_cross_site_form_is_refused(self, http: httpx.Client) -> None:
        sign_up(http)
        response = http.post(
            "/dashboard/keys", data={"name": "x"}, headers={"Origin": "https://evil.example"}
        )
        assert response.status_code == 403
        assert http.get("/api-keys").json() == {"keys": []}


class TestSubscriptionPages:
    def test_subscribe_pay_and_cancel(self, http: httpx.Client) -> None:
        sign_up(http)
        assert "Subscribe" in http.get("/dashboard/subscription").text

        started = form_post(http, "/dashboard/subscription")
        assert started.status_code == 303
        checkout_url = started.headers["location"]
        assert "/billing/checkout/chk_" in checkout_url
        assert "Pay and subscribe" in http.get(checkout_url).text

        paid = form_post(http, checkout_url)
        assert paid.status_code == 303
        page = http.get(paid.headers["location"])
        assert "Payment received" in page.text
        assert "Cancel at period end" in page.text

        cancelled = form_post(http, "/dashboard/subscription/cancel")
        assert cancelled.status_code == 303
        assert "stays in force until" in http.get(cancelled.headers["location"]).text
        assert http.get("/subscription").json()["cancelAtPeriodEnd"] is True
        billing = http.get("/dashboard/billing")
        assert billing.status_code == 200
        assert "standard · $49.00 a month" in billing.text
        last_day = period_end(period_of(utcnow())) - timedelta(days=1)
        assert f"1 {last_day:%b %Y} – {last_day:%-d %b %Y}" in billing.text  # readable, inclusive
        portal = form_post(http, "/dashboard/billing/portal")
        assert portal.status_code == 303
        assert portal.headers["location"].endswith("/dashboard/billing")  # the local portal

    def test_resume_undoes_a_cancellation_at_period_end(self, http: httpx.Client) -> None:
        sign_up(http)
        assert form_post(http, "/dashboard/subscription/resume").headers["location"] == (
            "/dashboard/subscription?notice=nothing_to_resume"
        )
        checkout_url = form_post(http, "/dashboard/subscription").headers["location"]
        form_post(http, checkout_url)
        form_post(http, "/dashboard/subscription/cancel")
        page = http.get("/dashboard/subscription").text
        assert "Resume subscription" in page
        assert 'data-confirm="Cancel' not in page

        cross_site = http.post(
            "/dashboard/subscription/resume", headers={"Origin": "https://evil.example"}
        )
        assert cross_site.status_code == 403
        assert http.get("/subscription").json()["cancelAtPeriodEnd"] is True

        resumed = form_post(http, "/dashboard/subscription/resume")

        assert resumed.headers["location"] == "/dashboard/subscription?notice=resumed"
        assert http.get("/subscription").json()["cancelAtPeriodEnd"] is False
        page = http.get(resumed.headers["location"]).text
        assert "Your subscription is resumed" in page
        assert 'data-confirm="Cancel the standard plan?' in page
        assert form_post(http, "/dashboard/subscription/resume").status_code == 303  # no-op

    def test_the_cost_of_subscribing_mid_month_is_said(self, http: httpx.Client) -> None:
        sign_up(http)
        next_month = period_end(period_of(utcnow()))
        page = http.get("/dashboard/subscription").text
        checkout = http.get(form_post(http, "/dashboard/subscription").headers["location"]).text
        for text in (page, checkout):
            assert "<strong>Subscribing mid-month:</strong> no proration." in text
            assert "The full $49.00 is due today for the rest of this calendar month" in text
            assert f"on the 1st of every month, from {next_month:%-d %b %Y}" in text

    def test_prices_come_from_the_settings(self, http: httpx.Client) -> None:
        sign_up(http)
        page = http.get("/dashboard/subscription").text
        assert "$49.00 <small>/ month</small>" in page
        assert "overage $0.50 per 1,000 credits" in page
        checkout = http.get(form_post(http, "/dashboard/subscription").headers["location"])
        assert "$49.00 <small>/ month</small>" in checkout.text
        assert "$0.50 per 1,000 credits" in checkout.text


class TestPagePlumbing:
    def test_unknown_browser_page_is_html_404_api_stays_json(self, http: httpx.Client) -> None:
        html = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
        page = http.get("/dashboard/nope", headers=html)
        assert page.status_code == 404
        assert page.headers["content-type"].startswith("text/html")
        assert "<h1>Page not found</h1>" in page.text

        for path, headers in [
            ("/dashboard/nope", {"Accept": "application/json"}),
            ("/nope", {}),
            ("/api-keys/x/y", html),
            ("/billing/portal/x", html),
        ]:
            answer = http.get(path, headers=headers)
            assert answer.status_code == 404, path
            assert answer.json()["error"]["code"] == "NOT_FOUND", path

    def test_the_404_page_keeps_the_navigation_when_signed_in(self, http: httpx.Client) -> None:
        html = {"Accept": "text/html"}
        signed_out = http.get("/dashboard/nope", headers=html).text
        sign_up(http)
        signed_in = http.get("/dashboard/nope", headers=html)

        assert 'aria-label="Dashboard"' not in signed_out
        assert 'href="/dashboard/signin">Sign in' in signed_out
        assert signed_in.status_code == 404
        assert 'aria-label="Dashboard"' in signed_in.text
        assert 'href="/dashboard/calls"' in signed_in.text
        assert 'href="/dashboard/signin">Sign in' not in signed_in.text

    def test_favicon_and_static_files(self, http: httpx.Client) -> None:
        icon = http.get("/favicon.ico", follow_redirects=True)
        assert icon.status_code == 200
        assert icon.headers["content-type"] == "image/svg+xml"
        assert icon.text.startswith("<svg")
        css = http.get("/dashboard/static/dashboard.css")
        assert css.headers["content-type"].startswith("text/css")
        assert "immutable" in css.headers["cache-control"]
        assert http.get("/dashboard/static/..%2Fpages.py").status_code == 404
        assert http.get("/dashboard/static/pages.py").status_code == 404

    def test_pages_have_no_inline_script_or_style(self, http: httpx.Client) -> None:
        """So a strict `script-src 'self'; style-src 'self'` policy holds."""
        sign_up(http)
        form_post(http, "/dashboard/keys", {"name": "k"})
        pages = ["/", "/dashboard/keys", "/dashboard/usage", "/dashboard/calls"]
        for path in [*pages, "/dashboard/subscription"]:
            text = http.get(path).text
            assert re.findall(r"<script(?![^>]*\bsrc=)", text) == [], path
            assert "<style" not in text, path
            assert " style=" not in text, path
            assert " on" + "click=" not in text, path


class TestCallsPage:
    def test_no_calls_yet(self, http: httpx.Client) -> None:
        sign_up(http)
        page = http.get("/dashboard/calls")
        assert page.status_code == 200
        assert "No calls in the last 7 days." in page.text

    def test_edited_filter_values_show_every_call_and_are_not_echoed(
        self, http: httpx.Client
    ) -> None:
        sign_up(http)
        page = http.get("/dashboard/calls", params={"principal": "<b>x", "outcome": "<i>"})
        assert page.status_code == 200
        assert "<b>x" not in page.text
        assert "<i>" not in page.text
        assert "No calls in the last 7 days." in page.text


class TestChartScale:
    @pytest.mark.parametrize(
        ("peak", "ticks"),
        [
            (0, [0, 1]),
            (1, [0, 1]),
            (3, [0, 2, 4]),
            (6, [0, 5, 10]),
            (49, [0, 50]),
            (999, [0, 500, 1000]),
            (1234, [0, 1000, 2000]),
        ],
    )
    def test_round_ticks_from_zero_to_at_least_the_peak(self, peak: int, ticks: list[int]) -> None:
        top, shown = y_ticks(peak)
        assert [tick.value for tick in shown] == ticks
        assert top == ticks[-1] >= peak
        assert [tick.y for tick in shown][0] == CHART_HEIGHT  # 0 at the bottom
        assert shown[-1].y == 0
