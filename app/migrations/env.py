"""Alembic environment: the engine comes from app.kit.db (or the caller's config attributes)."""

from alembic import context
from sqlmodel import SQLModel

import app.models  # noqa: F401  (registers the tables)
from app.kit.db import get_engine

target_metadata = SQLModel.metadata
engine = context.config.attributes.get("engine") or get_engine()

with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    context.run_migrations()
