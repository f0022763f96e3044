"""The models match the migrations: a database migrated to head has every table, column,
type, index, unique constraint and foreign key `app/models.py` declares, and nothing
else (alembic's autogenerate comparison, what `alembic check` runs). A model changed
without its migration fails here, not on the first deployment. `.ci/run` runs this
before any other test (`make check-migrations`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

import app.kit.db
import app.models  # noqa: F401  (registers the tables)
from tests.support.services import postgres_database_or_skip


def migrated_to_head(url: str) -> sa.Engine:
    engine = sa.create_engine(url)
    config = Config()
    config.set_main_option(
        "script_location", str(Path(app.kit.db.__file__).parents[1] / "migrations")
    )
    config.attributes["engine"] = engine
    command.upgrade(config, "head")
    return engine


def differences(engine: sa.Engine) -> list[object]:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, SQLModel.metadata))


def test_a_sqlite_database_at_head_matches_the_models(tmp_path: Path) -> None:
    engine = migrated_to_head(f"sqlite:///{tmp_path / 'geosvc.db'}")
    try:
        assert differences(engine) == []
    finally:
        engine.dispose()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    yield from postgres_database_or_skip()


def test_a_postgresql_database_at_head_matches_the_models(postgres_url: str) -> None:
    engine = migrated_to_head(postgres_url)
    try:
        assert differences(engine) == []
    finally:
        engine.dispose()


def test_the_comparison_sees_a_column_no_migration_adds(tmp_path: Path) -> None:
    """The check can fail: a model column the migrations never made is a difference."""
    engine = migrated_to_head(f"sqlite:///{tmp_path / 'geosvc.db'}")
    table = SQLModel.metadata.tables["users"]
    column = sa.Column("added_without_a_migration", sa.Integer, nullable=True)
    table.append_column(column)
    try:
        found = differences(engine)
    finally:
        table._columns.remove(column)  # the shared metadata as it was
        engine.dispose()
    assert [(d[0], d[-1].name) for d in found if isinstance(d, tuple)] == [
        ("add_column", "added_without_a_migration")
    ]
