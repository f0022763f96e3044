"""`geosvc admin backup` / `restore` end to end on real PostgreSQL and Redis: an account
with a key, a standard subscription, a Stripe customer, ledger usage and meter batches is
backed up, restored into a fresh database with empty Redis counters (a new key prefix),
and then: counters equal the ledger, the key works on a live server over the restored
database, and meter reports send nothing Stripe already has."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sqlmodel import col, select
from typer.testing import CliRunner, Result

from app.accounts.service import create_user
from app.api_keys.service import create_key
from app.billing.meter_reports import report_overage
from app.billing.service import set_plan
from app.billing.stripe_provider import stripe_client
from app.clock import period_of, utcnow
from app.db import new_session
from app.metering.keys import counter_key
from app.metering.ledger import ledger_total
from app.models import StripeCustomer, StripeMeterReport
from app.plans import Plan
from app.runtime import reload_settings
from tests.fakes.stripe import FakeStripe
from tests.mcp.conftest import connect, start_stack, structured
from tests.support.factories import PASSWORD, record_calls, unique_email
from tests.support.live_server import TEST_RUN_PREFIX, service_env
from tests.support.services import (
    REDIS_URL,
    REQUIRE_SERVICES,
    ServiceUnavailable,
    fresh_postgres_database,
    redis_reachable,
)

STANDARD_QUOTA = 5
METER_PATH = "/v1/billing/meter_events"


@pytest.fixture
def fake_stripe() -> Iterator[FakeStripe]:
    server = FakeStripe().start()
    yield server
    server.stop()


@pytest.fixture
def databases() -> Iterator[tuple[str, str]]:
    """Two fresh PostgreSQL databases: where the backup is taken, where it is restored."""
    try:
        if not redis_reachable(REDIS_URL):
            raise ServiceUnavailable(f"Redis at {REDIS_URL} is not reachable")
        with fresh_postgres_database() as source, fresh_postgres_database() as target:
            yield source, target
    except ServiceUnavailable as exc:
        if REQUIRE_SERVICES:
            raise
        pytest.skip(str(exc))


class Deployment:
    """Settings of this process pointed at one database and one Redis key prefix."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, geodata_dir: Path, fake_stripe: FakeStripe
    ) -> None:
        self.monkeypatch = monkeypatch
        self.geodata_dir = geodata_dir
        self.fake_stripe = fake_stripe
        self.prefixes: list[str] = []

    def env(self, database_url: str, prefix: str) -> dict[str, str]:
        return service_env(
            database_url=database_url,
            redis_url=REDIS_URL,
            data_dir=self.geodata_dir,
            **self.fake_stripe.env(),
            GEOSVC_STANDARD_QUOTA=str(STANDARD_QUOTA),
            GEOSVC_REDIS_KEY_PREFIX=prefix,
        )

    def use(self, database_url: str) -> dict[str, str]:
        """A fresh key prefix each time: its counters start empty, as after a Redis loss."""
        prefix = f"{TEST_RUN_PREFIX}backup-{secrets.token_hex(4)}:"
        self.prefixes.append(prefix)
        env = self.env(database_url, prefix)
        for key, value in env.items():
            if key.startswith("GEOSVC_"):
                self.monkeypatch.setenv(key, value)
        reload_settings()
        return env

    def cleanup(self) -> None:
        store = redis.Redis.from_url(REDIS_URL)
        for prefix in self.prefixes:
            keys = list(store.scan_iter(match=f"{prefix}*", count=1000))
            if keys:
                store.delete(*keys)
        for key in list(os.environ):
            if key.startswith("GEOSVC_"):
                self.monkeypatch.delenv(key, raising=False)
        reload_settings()


@pytest.fixture
def deployment(
    monkeypatch: pytest.MonkeyPatch, geodata_dir: Path, fake_stripe: FakeStripe
) -> Iterator[Deployment]:
    helper = Deployment(monkeypatch, geodata_dir, fake_stripe)
    yield helper
    helper.cleanup()


def admin(*args: str) -> Result:
    from app.cli import cli

    return CliRunner().invoke(cli, ["admin", *args])


def report() -> int:
    return report_overage(new_session, stripe_client)


def meter_sends(fake: FakeStripe, identifier: str) -> int:
    return sum(r.params["identifier"] == identifier for r in fake.requests("POST", METER_PATH))


def wait_for_ledger(user_id: str, total: int, deadline_s: float = 20.0) -> None:
    period = period_of(utcnow())
    deadline = time.monotonic() + deadline_s
    while True:
        with new_session() as session:
            if ledger_total(session, user_id, period) == total:
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"ledger of {user_id} never reached {total}")
        time.sleep(0.05)


class TestBackupAndRestore:
    def test_restore_into_a_fresh_database_keeps_keys_counters_and_stripe_in_step(
        self,
        databases: tuple[str, str],
        deployment: Deployment,
        fake_stripe: FakeStripe,
        tmp_path: Path,
    ) -> None:
        source, target = databases
        period = period_of(utcnow())

        # --- the deployment as it was: an account, a key, overage reported to Stripe ---
        deployment.use(source)
        from app.db import migrate

        migrate()
        with new_session() as session:
            user = create_user(session, email=unique_email("backup"), password=PASSWORD)
            _key, plaintext = create_key(session, user.id, "agent")
            set_plan(session, user.id, Plan.STANDARD, utcnow())
            customer = stripe_client().v1.customers.create({"metadata": {"user_id": user.id}})
            session.add(StripeCustomer(user_id=user.id, customer_id=customer.id))
            session.commit()
            user_id, customer_id = user.id, str(customer.id)
            record_calls(session, user_id, STANDARD_QUOTA + 4)
            assert report() == 1
            record_calls(session, user_id, 2)
            assert report() == 1
            # the second batch reached Stripe but the process died before marking it sent
            last = session.exec(
                select(StripeMeterReport).where(
                    col(StripeMeterReport.user_id) == user_id,
                    col(StripeMeterReport.overage_from) == 4,
                )
            ).one()
            last.sent_at = None
            session.add(last)
            session.commit()
            unmarked = last.identifier
        ledger = STANDARD_QUOTA + 6
        assert len(fake_stripe.meter_events(customer_id)) == 2
        assert meter_sends(fake_stripe, unmarked) == 1

        dump = tmp_path / "geosvc.dump"
        backed_up = admin("backup", "--output", str(dump))
        assert backed_up.exit_code == 0, backed_up.output
        assert dump.stat().st_size > 0
        assert dump.stat().st_mode & 0o077 == 0  # key hashes and e-mails: owner only

        # --- disaster: a fresh database and a Redis without counters ---
        env = deployment.use(target)
        store = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        assert not store.exists(counter_key(user_id, period))

        restored = admin("restore", str(dump))
        assert restored.exit_code == 0, restored.output
        assert store.hget(counter_key(user_id, period), "used") == str(ledger)

        # --- keys verify against the restored hashes; a call counts on the rebuilt counter ---
        stack = start_stack(env, tmp_path)
        try:

            async def call() -> dict:
                async with connect(stack.mcp_url, plaintext) as client:
                    result = await client.call_tool("get_population", {"postal_code": "94103"})
                    assert not result.is_error, result
                    return structured(result)

            assert asyncio.run(call())["postalCode"] == "94103"
            assert store.hget(counter_key(user_id, period), "used") == str(ledger + 1)
            wait_for_ledger(user_id, ledger + 1)
        finally:
            stack.server.stop()
            stack.worker.stop()

        # --- Stripe: the unmarked batch again under its identifier, then only the new call ---
        assert report() == 2
        assert meter_sends(fake_stripe, unmarked) == 2  # Stripe answered "already exists"
        events = fake_stripe.meter_events(customer_id)
        assert len(events) == 3
        assert sum(int(e["payload"]["value"]) for e in events) == ledger + 1 - STANDARD_QUOTA
        assert report() == 0

    def test_restore_refuses_a_database_that_has_tables(
        self, databases: tuple[str, str], deployment: Deployment, tmp_path: Path
    ) -> None:
        source, target = databases
        deployment.use(source)
        from app.db import migrate

        migrate()
        with new_session() as session:
            user = create_user(session, email=unique_email("backup"), password=PASSWORD)
            session.commit()
        dump = tmp_path / "geosvc.dump"
        assert admin("backup", "--output", str(dump)).exit_code == 0

        deployment.use(target)
        migrate()  # as if an api process had started on it first
        refused = admin("restore", str(dump))
        assert refused.exit_code == 1
        assert "already has" in refused.output

        replaced = admin("restore", "--force", str(dump))
        assert replaced.exit_code == 0, replaced.output
        shown = admin("find", user.id)
        assert shown.exit_code == 0, shown.output
        assert user.email in shown.output
        rebuilt = admin("rebuild-counters")
        assert rebuilt.exit_code == 0, rebuilt.output
        assert "rebuilt Redis counters" in rebuilt.output
