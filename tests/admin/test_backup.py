"""`geosvc admin backup` / `restore` end to end on real PostgreSQL and Redis: an account
with a key, a standard subscription, a Stripe customer, ledger usage and meter batches is
backed up, restored into a fresh database with empty Redis counters (a new key prefix),
and then: counters equal the ledger, the key works on a live server over the restored
database, and meter reports send nothing Stripe already has.

Issue 55, item 1: a backup taken while calls are being metered restores, by the
commands docs/OPERATIONS.md gives for compose, into an empty database with the same
accounts and keys and a consistent snapshot of the ledger, and counters rebuilt from it;
scheduled backups keep their retention and record their time for the age alert."""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sqlalchemy import text
from sqlmodel import col, select
from typer.testing import CliRunner, Result

from app.api_keys.service import create_key
from app.billing.meter_reports import report_overage
from app.billing.service import set_plan
from app.billing.stripe_provider import stripe_client
from app.kit.clock import period_of, utcnow
from app.kit.db import engine_for, new_session
from app.metering.keys import counter_key
from app.metering.ledger import ledger_total
from app.models import StripeCustomer, StripeMeterReport
from app.observability.exposition import BACKUP_STATUS_KEY
from app.plans import Plan
from app.runtime import reload_settings
from app.users.service import create_user
from tests.fakes.stripe import FakeStripe
from tests.mcp.conftest import connect, start_stack, structured
from tests.support.factories import PASSWORD, record_calls, unique_email
from tests.support.live_server import TEST_RUN_PREFIX, service_env
from tests.support.services import (
    POSTGRES_ADMIN_URL,
    REDIS_URL,
    REQUIRE_SERVICES,
    ServiceUnavailable,
    fresh_postgres_database,
    redis_reachable,
)

ROOT = Path(__file__).resolve().parents[2]
GEOSVC = str(Path(sys.executable).with_name("geosvc"))

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
        from app.kit.db import migrate

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
        from app.kit.db import migrate

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


# --- issue 55, item 1: a backup under load, restored as OPERATIONS.md says -------------


class Load:
    """Sequential MCP calls by each of `keys` in a thread of its own, until stopped: the
    completion time of every successful (metered) call."""

    def __init__(self, mcp_url: str, keys: list[str]) -> None:
        self.mcp_url = mcp_url
        self.keys = keys
        self.finished: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        async def calls(key: str) -> None:
            async with connect(self.mcp_url, key) as client:
                while not self._stop.is_set():
                    result = await client.call_tool("get_population", {"postal_code": "94103"})
                    if result.is_error:
                        self.failures.append(str(structured(result)))
                    else:
                        self.finished.append(time.monotonic())

        await asyncio.gather(*(calls(key) for key in self.keys))

    def start(self) -> None:
        self._thread.start()

    def wait_for(self, count: int, deadline_s: float = 60.0) -> None:
        deadline = time.monotonic() + deadline_s
        while len(self.finished) < count:
            assert not self.failures, self.failures
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise AssertionError(f"{len(self.finished)} calls, not {count}")
            time.sleep(0.02)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)


def rows(database_url: str, query: str) -> set[tuple[object, ...]]:
    engine = engine_for(database_url)
    try:
        with engine.connect() as connection:
            return {tuple(row) for row in connection.execute(text(query))}
    finally:
        engine.dispose()


ACCOUNTS = "SELECT id, email, password_hash FROM users"
KEYS = "SELECT key_id, user_id, secret_hash, scopes, revoked_at FROM api_keys"
LEDGER = "SELECT call_id, user_id, key_id, tool, credits, period FROM usage_events"
PLANS = "SELECT user_id, plan, status FROM subscriptions"


def documented_compose_restore() -> list[str]:
    """The compose restore block of docs/OPERATIONS.md ("Backups"), line by line."""
    operations = (ROOT / "docs" / "OPERATIONS.md").read_text()
    block = re.search(r"```sh\n(docker compose cp backup:.*?)```", operations, flags=re.S)
    assert block is not None, "the compose restore block is gone from OPERATIONS.md"
    return block.group(1).strip().splitlines()


def run_as_compose_would(line: str, dump: Path, database_url: str, env: dict[str, str]) -> None:
    """One line of the block on this machine: `docker compose exec -T postgres CMD` runs
    CMD against the local server, with the database and user of `database_url` for the
    compose ones (`geosvc`); `docker compose exec api geosvc ...` runs geosvc with `env`;
    starting and stopping services is left out (none runs here), and `cp` is the dump
    the test took."""
    words = shlex.split(line.split(" < ")[0])
    if words[:3] == ["docker", "compose", "cp"]:
        return
    if words[:3] == ["docker", "compose", "stop"] or words[:4] == ["docker", "compose", "up", "-d"]:
        return
    if words[:5] == ["docker", "compose", "exec", "api", "geosvc"]:
        subprocess.run([GEOSVC, *words[5:]], env=env, check=True, capture_output=True, timeout=120)
        return
    assert words[:5] == ["docker", "compose", "exec", "-T", "postgres"], line
    command = words[5:]
    database = database_url.rsplit("/", 1)[1]
    server = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    user = re.sub(r"^postgresql://([^@:]+).*", r"\1", server)
    host, port = re.sub(r"^postgresql://[^@]*@", "", server).split(":")
    command = [
        user if word == "geosvc" and previous == "-U" else word
        for previous, word in zip(["", *command[:-1]], command, strict=True)
    ]
    command = [database if word == "geosvc" else word for word in command]
    stdin = dump.open("rb") if " < " in line else None
    try:
        done = subprocess.run(
            command,
            env={**os.environ, "PGHOST": host, "PGPORT": port},
            stdin=stdin,
            capture_output=True,
            timeout=300,
        )
    finally:
        if stdin is not None:
            stdin.close()
    assert done.returncode == 0, (line, done.stderr.decode())


class TestBackupUnderLoad:
    def test_a_backup_taken_while_calls_are_metered_restores_into_an_empty_database(
        self,
        databases: tuple[str, str],
        deployment: Deployment,
        tmp_path: Path,
    ) -> None:
        source, target = databases
        period = period_of(utcnow())
        env = deployment.use(source)
        from app.kit.db import migrate

        migrate()
        users, keys = [], []
        with new_session() as session:
            for n in range(3):
                user = create_user(session, email=unique_email(f"drill{n}"), password=PASSWORD)
                _key, plaintext = create_key(session, user.id, "agent")
                create_key(session, user.id, "spare")
                set_plan(session, user.id, Plan.STANDARD, utcnow())
                session.commit()
                users.append(user.id)
                keys.append(plaintext)
        # the calls are what is measured here, not the plan's rate limits
        env = {**env, "GEOSVC_STANDARD_RATE_PER_S": "10000", "GEOSVC_STANDARD_BURST": "10000"}
        stack = start_stack(env, tmp_path)
        load = Load(stack.mcp_url, keys)
        dump = tmp_path / "under-load.dump"
        try:
            load.start()
            load.wait_for(15)
            started = time.monotonic()
            backed_up = subprocess.run(
                [GEOSVC, "admin", "backup", "--output", str(dump)],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            ended = time.monotonic()
            assert backed_up.returncode == 0, backed_up.stderr
            load.wait_for(len(load.finished) + 15)
            load.stop()
            # every call of the load reaches the source's ledger: the api drains the
            # outbox, so it must still run while we wait
            deadline = time.monotonic() + 60
            while len(rows(source, LEDGER)) < len(load.finished):
                assert time.monotonic() < deadline, "the source ledger never caught up"
                time.sleep(0.1)
        finally:
            load.stop()
            stack.server.stop()
            stack.worker.stop()
        assert not load.failures, load.failures
        during = [t for t in load.finished if started <= t <= ended]
        assert during, "no call was metered while the backup ran"

        # --- restore by the documented compose commands into a new, empty database ---
        restore_env = deployment.use(target)
        store = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        assert all(not store.exists(counter_key(user_id, period)) for user_id in users)
        lines = documented_compose_restore()
        assert any("dropdb" in line for line in lines)
        assert any("createdb" in line for line in lines)
        for line in lines:
            run_as_compose_would(line, dump, target, restore_env)

        # accounts, keys and plans exactly; the ledger a snapshot taken during the load
        assert rows(target, ACCOUNTS) == rows(source, ACCOUNTS)
        assert len(rows(target, ACCOUNTS)) >= 3
        assert rows(target, KEYS) == rows(source, KEYS)
        assert rows(target, PLANS) == rows(source, PLANS)
        restored, kept = rows(target, LEDGER), rows(source, LEDGER)
        assert restored < kept  # a snapshot: later calls are not in it
        assert len(restored) >= 15  # ... and the calls before the backup are
        # counters rebuilt by the documented `geosvc admin rebuild-counters` = the ledger
        for user_id in users:
            used = sum(1 for row in restored if row[1] == user_id)
            assert store.hget(counter_key(user_id, period), "used") == str(used), user_id

    def test_a_migrated_database_refuses_the_old_single_transaction_restore(
        self, databases: tuple[str, str], deployment: Deployment, tmp_path: Path
    ) -> None:
        """Why the documented restore drops and recreates the database first: the
        restore OPERATIONS.md used to give fails on one that `migrate` or the api has
        filled (`relation "admin_actions" already exists`)."""
        source, target = databases
        deployment.use(source)
        from app.kit.db import migrate

        migrate()
        dump = tmp_path / "geosvc.dump"
        assert admin("backup", "--output", str(dump)).exit_code == 0
        deployment.use(target)
        migrate()
        old = subprocess.run(
            ["pg_restore", "-d", target, "--no-owner", "--single-transaction", str(dump)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert old.returncode != 0
        assert "already exists" in old.stderr


class TestScheduledBackups:
    def test_a_scheduled_backup_keeps_its_retention_and_records_its_time(
        self, databases: tuple[str, str], deployment: Deployment, tmp_path: Path
    ) -> None:
        source, _ = databases
        deployment.use(source)
        from app.kit.config import get_settings
        from app.kit.db import migrate

        migrate()
        directory = tmp_path / "backups"
        directory.mkdir()
        old = directory / "geosvc-20200101T031700Z.dump"
        recent = directory / "geosvc-20991231T031700Z.dump"  # named later, written now
        unrelated = directory / "notes.txt"
        for path in (old, recent, unrelated):
            path.write_text("x")
        month_ago = time.time() - 31 * 86400
        os.utime(old, (month_ago, month_ago))
        os.utime(unrelated, (month_ago, month_ago))

        before = time.time()
        done = admin("backup", "--dir", str(directory), "--keep-days", "30")
        assert done.exit_code == 0, done.output
        dumps = sorted(directory.glob("geosvc-*.dump"))
        assert old not in dumps  # older than 30 days: deleted
        assert recent in dumps
        assert unrelated.exists()  # not a scheduled backup: never touched
        [new] = [path for path in dumps if path != recent]
        assert new.stat().st_size > 100
        assert new.stat().st_mode & 0o077 == 0
        store = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        recorded = store.get(f"{get_settings().redis_key_prefix}{BACKUP_STATUS_KEY}")
        assert recorded is not None
        assert before - 1 <= float(recorded) <= time.time() + 1

    def test_a_failed_backup_records_nothing(
        self, deployment: Deployment, tmp_path: Path, databases: tuple[str, str]
    ) -> None:
        source, _ = databases
        deployment.use(source)
        from app.kit.config import get_settings
        from app.runtime import reload_settings

        os.environ["GEOSVC_DATABASE_URL"] = source.rsplit("/", 1)[0] + "/no_such_database"
        reload_settings()
        done = admin("backup", "--dir", str(tmp_path))
        assert done.exit_code == 1
        assert list(tmp_path.glob("geosvc-*")) == []  # no partial file left either
        store = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        assert store.get(f"{get_settings().redis_key_prefix}{BACKUP_STATUS_KEY}") is None
