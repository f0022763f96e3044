"""Migration 0007 on a database with keys and a ledger from before it: each used key gets
its latest charged call as `last_used_at`; the downgrade removes the columns again."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config

import app.kit.db
from tests.support.services import postgres_database_or_skip


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'geosvc.db'}"
        return
    yield from postgres_database_or_skip()


def alembic(engine: sa.Engine) -> Config:
    config = Config()
    config.set_main_option(
        "script_location", str(Path(app.kit.db.__file__).parents[1] / "migrations")
    )
    config.attributes["engine"] = engine
    return config


def test_used_keys_get_their_latest_charged_call(database_url: str) -> None:
    engine = sa.create_engine(app.kit.db.normalise_url(database_url))
    config = alembic(engine)
    command.upgrade(config, "0005_checkout_url")
    early, late = datetime(2026, 10, 3, 8, tzinfo=UTC), datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
    with engine.begin() as db:
        db.execute(
            sa.text("INSERT INTO users (id, email, password_hash, created_at) VALUES "
                    "('usr_a', 'a@example.com', 'x', :at)"), {"at": early},
        )  # fmt: skip
        for key_id in ("used", "idle"):
            db.execute(
                sa.text("INSERT INTO api_keys (key_id, user_id, name, env, scopes, "
                        "secret_hash, created_at) VALUES (:k, 'usr_a', :k, 'live', "
                        "'read:data', 'h', :at)"), {"k": key_id, "at": early},
            )  # fmt: skip
        for n, at in enumerate((early, late, early)):
            db.execute(
                sa.text("INSERT INTO usage_events (call_id, user_id, key_id, tool, credits, "
                        "period, created_at) VALUES (:c, 'usr_a', 'used', 'geocode', 1, "
                        ":p, :at)"), {"c": f"call_{n}", "p": f"{at:%Y-%m}", "at": at},
            )  # fmt: skip

    command.upgrade(config, "head")

    keys = sa.table("api_keys", sa.column("key_id"), sa.column("last_used_at", sa.DateTime(True)))
    with engine.connect() as db:
        found = dict(db.execute(sa.select(keys.c.key_id, keys.c.last_used_at)).all())
    assert found["idle"] is None
    used = found["used"]
    assert (used if used.tzinfo else used.replace(tzinfo=UTC)) == late
    command.downgrade(config, "0005_checkout_url")
    columns = {column["name"] for column in sa.inspect(engine).get_columns("api_keys")}
    assert not {"expires_at", "last_used_at"} & columns
    engine.dispose()
