"""api_keys.expires_at and last_used_at: keys that expire, and when each was last used
without scanning the ledger (the request log itself lives in Redis)

Revision ID: 0007_request_log_keys
Revises: 0008_oauth
Create Date: 2026-11-24 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_request_log_keys"
down_revision: str | None = "0008_oauth"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))
    # Keys used before this revision: their latest charged call, from one scan of the
    # ledger (the drain keeps it from here on).
    events = sa.table(
        "usage_events", sa.column("key_id"), sa.column("created_at", sa.DateTime(timezone=True))
    )
    keys = sa.table(
        "api_keys", sa.column("key_id"), sa.column("last_used_at", sa.DateTime(timezone=True))
    )
    connection = op.get_bind()
    latest = connection.execute(
        sa.select(events.c.key_id, sa.func.max(events.c.created_at))
        .where(events.c.key_id.is_not(None))
        .group_by(events.c.key_id)
    ).all()
    for key_id, last_used_at in latest:
        connection.execute(
            keys.update().where(keys.c.key_id == key_id).values(last_used_at=last_used_at)
        )


def downgrade() -> None:
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_column("last_used_at")
        batch_op.drop_column("expires_at")
