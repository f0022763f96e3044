"""`geosvc admin` through the real `geosvc` command (typer's CliRunner on `app.cli.cli`),
on SQLite and PostgreSQL and the real Redis: what each command changes, and its audit."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from sqlmodel import col, select
from typer.testing import CliRunner, Result

from app.api_keys.service import create_key
from app.api_keys.verify import verify_bearer
from app.kit.clock import period_of, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.errors import QuotaExceeded, Unauthenticated
from app.metering import service as metering
from app.metering.keys import counter_key, reservations_key
from app.metering.ledger import ledger_total
from app.models import AdminAction, UsageEvent
from app.plans import Plan, plan_of
from app.users.service import create_user
from tests.support.factories import PASSWORD, unique_email
from tests.support.fixtures import Backend

ACTOR = "ops-test@example"


@pytest.fixture
def admin(use_backend: Backend) -> Iterator[Admin]:
    helper = Admin()
    yield helper
    helper.cleanup()


class Admin:
    def __init__(self) -> None:
        self.store = redis.Redis.from_url(str(get_settings().redis_url), decode_responses=True)
        self.period = period_of(utcnow())
        self.users: list[str] = []

    def run(self, *args: str) -> Result:
        try:
            return CliRunner().invoke(cli_app(), ["admin", *args])
        finally:
            # the admin commands log to the runner's stderr; that stream closes with it
            root = logging.getLogger()
            root.handlers = [h for h in root.handlers if h.get_name() != "geosvc"]

    def user(self, email: str | None = None) -> tuple[str, str]:
        email = email or unique_email("admin")
        with new_session() as session:
            user = create_user(session, email=email, password=PASSWORD)
            session.commit()
        self.users.append(user.id)
        return user.id, email

    def audit(self, user_id: str) -> list[AdminAction]:
        with new_session() as session:
            query = select(AdminAction).where(col(AdminAction.user_id) == user_id)
            return list(session.exec(query.order_by(col(AdminAction.id))))

    def cleanup(self) -> None:
        for user_id in self.users:
            self.store.delete(
                counter_key(user_id, self.period), reservations_key(user_id, self.period)
            )


def cli_app() -> Any:
    from app.cli import cli

    return cli


def log_events(result: Result, event: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == event]


class TestFind:
    def test_by_email_in_any_case_and_by_id(self, admin: Admin) -> None:
        user_id, email = admin.user()
        by_email = admin.run("find", email.upper())
        assert by_email.exit_code == 0, by_email.output
        assert json.loads(by_email.stdout)["userId"] == user_id
        by_id = admin.run("find", user_id)
        assert json.loads(by_id.stdout) == {**json.loads(by_email.stdout)}
        assert json.loads(by_id.stdout)["plan"] == "free"

    def test_unknown_account_is_an_error(self, admin: Admin) -> None:
        result = admin.run("find", unique_email("nobody"))
        assert result.exit_code == 1
        assert "NOT_FOUND" in result.stderr


class TestGrant:
    async def test_a_capped_free_account_can_call_again(self, admin: Admin) -> None:
        user_id, email = admin.user()
        quota = get_settings().free_quota
        admin.store.hset(counter_key(user_id, admin.period), "used", quota)
        with pytest.raises(QuotaExceeded):
            await metering.reserve(user_id, Plan.FREE)

        result = admin.run("grant", email, "3", "--reason", "outage refund", "--actor", ACTOR)

        assert result.exit_code == 0, result.output
        assert f"granted 3 credits to {user_id}" in result.stdout
        assert admin.store.hget(counter_key(user_id, admin.period), "used") == str(quota - 3)
        for _ in range(3):
            await metering.release(await metering.reserve(user_id, Plan.FREE))
        # the ledger holds the adjustment, so reconciliation agrees with the counter
        with new_session() as session:
            rows = session.exec(select(UsageEvent).where(col(UsageEvent.user_id) == user_id)).all()
            assert [(row.tool, row.credits, row.period) for row in rows] == [
                ("admin_grant", -3, admin.period)
            ]
            assert ledger_total(session, user_id, admin.period) == -3
        [action] = admin.audit(user_id)
        assert (action.actor, action.action) == (ACTOR, "grant_credits")
        assert action.reason == "outage refund"
        assert json.loads(action.details)["credits"] == 3
        [line] = log_events(result, "admin_action")
        assert line["action"] == "grant_credits"
        assert line["user_id"] == user_id
        assert line["actor"] == ACTOR
        assert line["reason"] == "outage refund"

        shown = json.loads(admin.run("show", user_id).stdout)
        assert shown["grantedThisPeriod"] == 3
        # the calls' credits and the grant apart (the counter holds their difference)
        assert (shown["usage"]["used"], shown["usage"]["granted"]) == (quota, 3)
        assert shown["usage"]["remaining"] == 3
        assert shown["audit"][0]["action"] == "grant_credits"

    @pytest.mark.parametrize(
        "args",
        [
            ["0", "--reason", "x"],
            ["1000001", "--reason", "x"],
            ["5", "--reason", "   "],
            ["5", "--reason", "r" * 501],
        ],
    )
    def test_bad_amounts_and_reasons_change_nothing(self, admin: Admin, args: list[str]) -> None:
        user_id, email = admin.user()
        result = admin.run("grant", email, *args)
        assert result.exit_code == 1
        assert "INVALID_ARGUMENT" in result.stderr
        with new_session() as session:
            assert ledger_total(session, user_id, admin.period) == 0
        assert admin.audit(user_id) == []

    def test_a_reason_is_required(self, admin: Admin) -> None:
        _user_id, email = admin.user()
        result = admin.run("grant", email, "5")
        assert result.exit_code == 2
        assert "--reason" in result.output


class TestPlan:
    def test_standard_then_free(self, admin: Admin) -> None:
        user_id, email = admin.user()
        up = admin.run("set-plan", email, "standard", "--reason", "partner", "--actor", ACTOR)
        assert up.exit_code == 0, up.output
        with new_session() as session:
            assert plan_of(session, user_id) is Plan.STANDARD
        assert json.loads(admin.run("show", email).stdout)["usage"]["mode"] == "standard"

        down = admin.run("set-plan", email, "free", "--reason", "partnership ended")
        assert down.exit_code == 0, down.output
        with new_session() as session:
            assert plan_of(session, user_id) is Plan.FREE
        actions = admin.audit(user_id)
        assert [json.loads(a.details) for a in actions] == [
            {"before": "free", "after": "standard"},
            {"before": "standard", "after": "free"},
        ]
        assert actions[1].actor != ""

    def test_unknown_plan_is_refused(self, admin: Admin) -> None:
        _user_id, email = admin.user()
        result = admin.run("set-plan", email, "platinum", "--reason", "x")
        assert result.exit_code == 2


class TestRevokeKeys:
    def test_every_active_key_stops_working(self, admin: Admin) -> None:
        user_id, email = admin.user()
        other_id, _ = admin.user()
        with new_session() as session:
            keys = [create_key(session, user_id, f"k{i}") for i in range(2)]
            _other_key, other_plaintext = create_key(session, other_id, "other")
            session.commit()
        for _key, plaintext in keys:
            assert verify_bearer(f"Bearer {plaintext}").user_id == user_id

        result = admin.run("revoke-keys", email, "--reason", "leaked", "--actor", ACTOR)

        assert result.exit_code == 0, result.output
        assert "revoked 2 keys" in result.stdout
        for _key, plaintext in keys:
            with pytest.raises(Unauthenticated):
                verify_bearer(f"Bearer {plaintext}")
        assert verify_bearer(f"Bearer {other_plaintext}").user_id == other_id
        [action] = admin.audit(user_id)
        assert sorted(json.loads(action.details)["keys"]) == sorted(k.key_id for k, _ in keys)
        shown = json.loads(admin.run("show", user_id).stdout)
        assert (shown["keys"], shown["revokedKeys"]) == ([], 2)
