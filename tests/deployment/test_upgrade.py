"""An upgrade across the latest migrations on a copy of a populated PostgreSQL database,
as docs/DEPLOYMENT.md ("Upgrades and rollbacks") has operators rehearse it (issue 38,
item 6): the database is populated at the revision two steps before head, copied, the
copy upgraded by `geosvc migrate`, and the new code serves the old data; the original is
untouched, and the rollback (`--down-to`) keeps the rows older code knows."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg
import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory

from app.api_keys.service import KEY_ID_LENGTH, SECRET_LENGTH
from app.kit.embedded_redis import free_port
from app.kit.ids import random_base62, random_lower_alnum
from app.users.service import hash_password
from tests.support.factories import mcp_initialize
from tests.support.fixtures import Backend
from tests.support.live_server import service_env, start_live_server
from tests.support.services import POSTGRES_ADMIN_URL, postgres_database_or_skip

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "an upgrade survives this password"
pytestmark = pytest.mark.parametrize("backend", ["postgres"], indirect=True)


def revisions_back_from_head(steps: int) -> tuple[str, list[str]]:
    """(the revision `steps` before head, the revisions after it up to head)."""
    config = Config()
    config.set_main_option("script_location", str(ROOT / "app" / "migrations"))
    script = ScriptDirectory.from_config(config)
    chain = [revision.revision for revision in script.walk_revisions()]  # head first
    return chain[steps], list(reversed(chain[:steps]))


def geosvc(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", *args], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture
def database() -> Iterator[str]:
    yield from postgres_database_or_skip()


@pytest.fixture
def copy_of(database: str) -> Iterator[str]:
    """A copy made as the procedure makes one (CREATE DATABASE ... TEMPLATE), dropped after."""
    name = f"{database.rsplit('/', 1)[1]}_copy"
    yield f"{database.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def populate(url: str, pepper: str) -> dict[str, str]:
    """An account with a password, a session-less API key and three charged calls this
    month, written with the columns the old revision has (plain SQL: today's models
    describe head)."""
    user_id = f"usr_{secrets.token_hex(8)}"
    email = f"upgrade-{secrets.token_hex(4)}@example.com"
    key_id = random_lower_alnum(KEY_ID_LENGTH)
    secret = random_base62(SECRET_LENGTH)
    now = datetime.now(UTC)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO users (id, email, name, password_hash, created_at, email_verified_at,"
            " mailbox) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (user_id, email, "Ada", hash_password(PASSWORD), now, now, email),
        )
        conn.execute(
            "INSERT INTO api_keys (key_id, user_id, name, env, scopes, secret_hash, created_at)"
            " VALUES (%s, %s, 'from before the upgrade', 'live', 'read:data', %s, %s)",
            (
                key_id,
                user_id,
                hmac.new(pepper.encode(), secret.encode(), hashlib.sha256).hexdigest(),
                now,
            ),
        )
        for n in range(3):
            conn.execute(
                "INSERT INTO usage_events (call_id, user_id, key_id, tool, credits, period,"
                " created_at) VALUES (%s, %s, %s, 'geocode', 1, %s, %s)",
                (f"call_upgrade_{user_id}_{n}", user_id, key_id, f"{now:%Y-%m}", now),
            )
    return {"email": email, "key": f"svc_live_ak_{key_id}_{secret}", "user_id": user_id}


class TestUpgrade:
    def test_the_latest_migrations_keep_the_data_and_the_new_code_serves_it(
        self, backend: Backend, database: str, copy_of: str, tmp_path: Path
    ) -> None:
        older, newer = revisions_back_from_head(2)
        assert len(newer) == 2
        env = service_env(
            database_url=database, redis_url=backend.redis_url, data_dir=backend.data_dir
        )
        geosvc(env, "migrate", "--to", older)
        account = populate(database, env["GEOSVC_SECRET_PEPPER"])

        with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
            source = database.rsplit("/", 1)[1]
            admin.execute(f'CREATE DATABASE "{copy_of.rsplit("/", 1)[1]}" TEMPLATE "{source}"')
        copy_env = {**env, "GEOSVC_DATABASE_URL": copy_of}

        # The new code refuses the old schema until the migrate step has run.
        refused = subprocess.run(
            [sys.executable, "-m", "app.cli", "api", "--no-migrate", "--port", "9"],
            env=copy_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode != 0
        assert f"schema is at {older}" in refused.stderr

        assert f"database at {newer[-1]}" in geosvc(copy_env, "migrate")
        assert f"database at {older}" in geosvc(env, "migrate", "--show")  # the original

        server = start_live_server(copy_env, tmp_path / "server.log")
        try:
            with httpx.Client(base_url=server.url, timeout=30) as http:
                signed_in = http.post(
                    "/auth/signin", json={"email": account["email"], "password": PASSWORD}
                )
                assert signed_in.status_code == 200, signed_in.text
                assert http.get("/usage").json()["used"] == 3  # rebuilt from the ledger
                [key] = http.get("/api-keys").json()["keys"]
                assert key["name"] == "from before the upgrade"
                assert key["expiresAt"] is None  # a column of the newest migration
            assert mcp_initialize(server.url, account["key"]).status_code == 200
            assert mcp_initialize(server.url, account["key"] + "x").status_code in (401, 403)
        finally:
            server.stop()

    def test_a_rollback_keeps_the_rows_older_code_knows(
        self, backend: Backend, database: str, tmp_path: Path
    ) -> None:
        older, _ = revisions_back_from_head(2)
        env = service_env(
            database_url=database, redis_url=backend.redis_url, data_dir=backend.data_dir
        )
        geosvc(env, "migrate", "--to", older)
        account = populate(database, env["GEOSVC_SECRET_PEPPER"])
        geosvc(env, "migrate")
        assert f"database at {older}" in geosvc(env, "migrate", "--down-to", older)
        with psycopg.connect(database) as conn:
            keys = conn.execute(
                "SELECT count(*) FROM api_keys WHERE user_id = %s", (account["user_id"],)
            ).fetchone()
            calls = conn.execute(
                "SELECT count(*) FROM usage_events WHERE user_id = %s", (account["user_id"],)
            ).fetchone()
        assert keys == (1,)
        assert calls == (3,)


class TestCodeOnlyRollback:
    def test_an_older_release_serves_a_schema_it_does_not_know(
        self, backend: Backend, database: str, tmp_path: Path
    ) -> None:
        """A rollback of the code alone: the database was migrated by a newer release
        (a revision this code has never heard of); `geosvc api --no-migrate` serves it
        with a warning instead of refusing, and `migrate --show` says so."""
        env = service_env(
            database_url=database, redis_url=backend.redis_url, data_dir=backend.data_dir
        )
        geosvc(env, "migrate")
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute("UPDATE alembic_version SET version_num = '0099_from_the_future'")
        assert "newer than this release knows" in geosvc(env, "migrate", "--show")
        port = free_port()
        log = tmp_path / "api.log"
        with log.open("wb") as out:
            api = subprocess.Popen(
                [sys.executable, "-m", "app.cli", "api", "--no-migrate", "--port", str(port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + 60
            while True:
                assert api.poll() is None, log.read_text()
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        finally:
            api.terminate()
            api.wait(timeout=30)
        assert "newer than this release's" in log.read_text()
