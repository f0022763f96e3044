"""GET /usage on the live server (session cookie)."""

from __future__ import annotations

import httpx
import pytest
from sqlmodel import Session

from app.kit.clock import period_of, utcnow
from app.metering.ledger import record_events
from app.models import Subscription
from tests.metering.conftest import Accounts
from tests.metering.test_ledger import events_for
from tests.support.factories import sign_up
from tests.support.live_server import LiveServer


@pytest.fixture
def user_id(http: httpx.Client, accounts: Accounts) -> str:
    user_id = str(sign_up(http)["userId"])
    accounts.user_ids.append(user_id)
    return user_id


def make_standard(session: Session, user_id: str) -> None:
    session.add(Subscription(user_id=user_id, plan="standard", status="active"))
    session.commit()


class TestGetUsage:
    def test_needs_a_session(self, live_server: LiveServer) -> None:
        with httpx.Client(base_url=live_server.url) as anonymous:
            response = anonymous.get("/usage")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"

    def test_new_free_account(
        self, http: httpx.Client, user_id: str, live_server: LiveServer
    ) -> None:
        response = http.get("/usage")

        assert response.status_code == 200
        body = response.json()
        limits = body.pop("limits")
        assert body.pop("test") == {  # test-mode keys' calls, apart (issue 57)
            "period": period_of(utcnow()),
            "used": 0,
            "limit": 10_000,
            "remaining": 10_000,
        }
        assert body == {
            "period": period_of(utcnow()),
            "used": 0,
            "granted": 0,
            "quota": 1000,
            "remaining": 1000,
            "percent": 0,
            "state": "ok",
            "mode": "free",
            "creditCap": None,
        }
        env = live_server.env  # the plan's limits, as the server was configured
        assert limits == {
            "ratePerSecond": float(env["GEOSVC_FREE_RATE_PER_S"]),
            "burst": int(env["GEOSVC_FREE_BURST"]),
            "accountRatePerSecond": float(env["GEOSVC_FREE_RATE_PER_S"]) * 2,
            "accountBurst": int(env["GEOSVC_FREE_BURST"]) * 2,
            "concurrency": int(env["GEOSVC_FREE_CONCURRENCY"]),
            "heavyMapPixels": 240_000,
        }

    @pytest.mark.parametrize(
        ("used", "percent", "state"),
        [
            (79_990, 79.99, "ok"),
            (80_000, 80.0, "warning"),
            (100_000, 100.0, "warning"),
            (100_100, 100.1, "over"),
        ],
    )
    def test_states_of_the_standard_plan(
        self,
        http: httpx.Client,
        user_id: str,
        session: Session,
        accounts: Accounts,
        used: int,
        percent: float,
        state: str,
    ) -> None:
        make_standard(session, user_id)
        accounts.set_used(user_id, period_of(utcnow()), used)

        body = http.get("/usage").json()

        assert (body["used"], body["quota"], body["mode"]) == (used, 100_000, "standard")
        assert (body["percent"], body["state"]) == (percent, state)

    def test_free_account_at_its_cap(
        self, http: httpx.Client, user_id: str, accounts: Accounts
    ) -> None:
        accounts.set_used(user_id, period_of(utcnow()), 1000)

        body = http.get("/usage").json()

        assert (body["used"], body["percent"], body["state"]) == (1000, 100.0, "warning")

    def test_falls_back_to_the_ledger_when_redis_has_no_counter(
        self, http: httpx.Client, user_id: str, session: Session, accounts: Accounts
    ) -> None:
        record_events(session, events_for(user_id, 7))
        session.commit()

        assert http.get("/usage").json()["used"] == 7
        accounts.set_used(user_id, period_of(utcnow()), 9)  # Redis is ahead: pending events
        assert http.get("/usage").json()["used"] == 9


class TestCreditCap:
    def test_set_read_and_remove(self, http: httpx.Client, user_id: str) -> None:
        response = http.put("/usage/cap", json={"cap": 5000})

        assert response.status_code == 200
        assert response.json() == {"creditCap": 5000}
        assert http.get("/usage").json()["creditCap"] == 5000
        assert http.put("/usage/cap", json={"cap": None}).json() == {"creditCap": None}
        assert http.get("/usage").json()["creditCap"] is None

    def test_a_whole_number_written_with_a_fraction_is_that_number(
        self, http: httpx.Client, user_id: str
    ) -> None:
        """JSON (and JSON Schema's integer) does not tell 5000.0 from 5000; 1.5 stays 422."""
        response = http.put("/usage/cap", json={"cap": 5000.0})

        assert response.status_code == 200
        assert response.json() == {"creditCap": 5000}

    @pytest.mark.parametrize(
        "body",
        [{"cap": 0}, {"cap": -5}, {"cap": "100"}, {"cap": 1.5}, {"cap": 10**10}, {}, {"x": 1}],
    )
    def test_refuses_what_is_not_a_cap(
        self, http: httpx.Client, user_id: str, body: dict[str, object]
    ) -> None:
        response = http.put("/usage/cap", json=body)

        assert response.status_code == 422
        assert response.json()["error"]["code"] == "INVALID_ARGUMENT"
        assert http.get("/usage").json()["creditCap"] is None

    def test_needs_a_session_and_refuses_other_sites(
        self, live_server: LiveServer, http: httpx.Client, user_id: str
    ) -> None:
        with httpx.Client(base_url=live_server.url) as anonymous:
            assert anonymous.put("/usage/cap", json={"cap": 5}).status_code == 401
        cross_site = http.put(
            "/usage/cap", json={"cap": 5}, headers={"Origin": "https://evil.example"}
        )
        assert cross_site.status_code == 403
        assert http.get("/usage").json()["creditCap"] is None
