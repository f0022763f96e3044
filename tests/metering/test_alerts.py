"""Usage alerts: decided by the commit script on the real Redis, recorded once in the
database, and mailed end to end (live server, Celery worker, SMTP server on 127.0.0.1)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import create_engine
from sqlmodel import Session, col, select

from app.kit.clock import period_of, utcnow
from app.kit.redis_client import sync_redis
from app.metering import alerts
from app.metering.keys import counter_key, reservations_key
from app.metering.scripts import ALERT_NONE, ALERT_QUOTA, ALERT_WARNING, commit_script
from app.models import UsageAlert, User
from app.plans import Plan
from app.runtime import reload_settings
from tests.billing.conftest import subscribe
from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack, connect
from tests.metering.conftest import Accounts
from tests.support.fixtures import Backend
from tests.support.mail_stack import FREE_QUOTA, STANDARD_QUOTA, confirmed_account


def commit_alerts(user_id: str, period: str, warning: int, quota: int, calls: int) -> list[int]:
    """What the commit script answers for `calls` successful calls, one by one."""
    keys = [counter_key(user_id, period), reservations_key(user_id, period)]
    return [
        int(commit_script.run(sync_redis(), keys, ["res_x", 1, 3600, warning, quota])[2])
        for _ in range(calls)
    ]


class TestTheCommitDecides:
    def test_one_warning_and_one_quota_alert_a_month(self, redis_accounts: Accounts) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())

        answers = commit_alerts(user_id, period, warning=4, quota=5, calls=8)

        assert answers == [0, 0, 0, ALERT_WARNING, ALERT_QUOTA, 0, 0, 0]
        next_month = commit_alerts(user_id, "2999-01", warning=4, quota=5, calls=5)
        assert next_month == [0, 0, 0, ALERT_WARNING, ALERT_QUOTA]

    def test_reaching_the_quota_at_once_sends_no_late_warning(
        self, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        redis_accounts.set_used(user_id, period, 99)  # e.g. raised by reconciliation

        assert commit_alerts(user_id, period, warning=80, quota=100, calls=3) == [
            ALERT_QUOTA,
            ALERT_NONE,
            ALERT_NONE,
        ]

    def test_an_upgrade_has_its_own_thresholds(self, redis_accounts: Accounts) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        assert commit_alerts(user_id, period, 4, 5, 5)[-2:] == [ALERT_WARNING, ALERT_QUOTA]
        # now standard (quota 10): its own warning at 8 and quota at 10
        assert commit_alerts(user_id, period, 8, 10, 5) == [0, 0, ALERT_WARNING, 0, ALERT_QUOTA]

    def test_thresholds_follow_the_usage_state(self) -> None:
        from app.metering.readings import usage_state

        for quota in (1, 5, 10, 999, 1000, 100_000):
            warning = (quota * 80 + 99) // 100
            assert usage_state(warning, quota) == "warning"
            assert usage_state(warning - 1, quota) == "ok"


class TestOneMailEach:
    @pytest.fixture
    def mail_settings(
        self, use_backend: Backend, fake_smtp: FakeSmtp, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """This process's Settings mail through the fake SMTP server (use_backend resets
        them afterwards)."""
        for key, value in fake_smtp.env().items():
            monkeypatch.setenv(key, value)
        reload_settings()

    def test_a_second_claim_of_the_same_alert_sends_nothing(
        self, mail_settings: None, accounts: Accounts, fake_smtp: FakeSmtp
    ) -> None:
        """A lost Redis counter loses its claims; the database row still says sent."""
        from app.kit.db import new_session

        with new_session() as session:
            user_id = accounts.create(session)
            email = f"alerts-{user_id}@example.com"
            user = session.get(User, user_id)
            assert user is not None
            user.email = email
            session.add(user)
            session.commit()
        period = period_of(utcnow())

        assert alerts.send_alert(user_id, period, Plan.FREE.value, "warning", 1000) is True
        assert alerts.send_alert(user_id, period, Plan.FREE.value, "warning", 1000) is False

        mail = fake_smtp.wait_for(email, "You have used 80 % of your credits")
        assert "1,000 credits, data calls are refused" in mail.text
        assert len(fake_smtp.messages(email)) == 1
        with new_session() as session:
            rows = list(session.exec(select(UsageAlert).where(col(UsageAlert.user_id) == user_id)))
        assert [(row.kind, row.sent_at is not None) for row in rows] == [("warning", True)]


def alert_rows(stack: Stack, user_id: str, deadline_s: float = 10.0) -> list[tuple[str, bool]]:
    """(kind, sent) of the account's alerts, once both are marked sent (the mark follows
    the SMTP server's answer) or at the deadline."""
    engine = create_engine(stack.database_url)
    deadline = time.monotonic() + deadline_s
    try:
        while True:
            with Session(engine) as session:
                query = select(UsageAlert).where(col(UsageAlert.user_id) == user_id)
                rows = sorted((row.kind, row.sent_at is not None) for row in session.exec(query))
            if rows == [("quota", True), ("warning", True)] or time.monotonic() > deadline:
                return rows
            time.sleep(0.05)
    finally:
        engine.dispose()


@pytest.fixture
def http(mail_stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=mail_stack.server.url, timeout=30) as client:
        yield client


async def calls(stack: Stack, key: str, count: int) -> list[str]:
    """`count` geocode calls; each answer's error code, or "ok"."""
    outcomes = []
    async with connect(stack.mcp_url, key) as client:
        for _ in range(count):
            result = await client.call_tool("geocode", {"query": "Austin, TX", "limit": 1})
            error = (result.structured_content or {}).get("error")
            outcomes.append(error["code"] if result.is_error and error else "ok")
    return outcomes


class TestAlertMails:
    async def test_a_free_account_is_told_at_80_percent_and_when_blocked(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        account = confirmed_account(http, fake_smtp)
        key = http.post("/api-keys", json={"name": "agent"}).json()["plaintext"]

        outcomes = await calls(mail_stack, key, FREE_QUOTA + 2)

        assert outcomes == ["ok"] * FREE_QUOTA + ["QUOTA_EXCEEDED"] * 2
        warning = fake_smtp.wait_for(account.email, "You have used 80 % of your credits")
        assert f"At {FREE_QUOTA:,} credits, data calls are refused" in warning.text
        blocked = fake_smtp.wait_for(account.email, "free credits for")
        assert "refused (QUOTA_EXCEEDED) until 1 " in blocked.text
        assert "/dashboard/subscription" in blocked.text
        assert alert_rows(mail_stack, account.user_id) == [("quota", True), ("warning", True)]
        # one each: the refused calls claimed nothing
        usage_mails = [m for m in fake_smtp.messages(account.email) if "credit" in m.subject]
        assert len(usage_mails) == 2

    async def test_a_standard_account_is_told_when_overage_starts(
        self, mail_stack: Stack, fake_smtp: FakeSmtp, http: httpx.Client
    ) -> None:
        account = confirmed_account(http, fake_smtp)
        subscribe(http)
        key = http.post("/api-keys", json={"name": "agent"}).json()["plaintext"]

        outcomes = await calls(mail_stack, key, STANDARD_QUOTA + 2)

        assert outcomes == ["ok"] * (STANDARD_QUOTA + 2)  # overage is soft
        warning = fake_smtp.wait_for(account.email, "You have used 80 % of your credits")
        assert "billed as overage" in warning.text
        started = fake_smtp.wait_for(account.email, "Overage has started")
        assert f"the {STANDARD_QUOTA:,} credits its plan includes" in started.text
        assert alert_rows(mail_stack, account.user_id) == [("quota", True), ("warning", True)]
