"""api_keys.expires_at and last_used_at: keys that expire, and when each was last used
without scanning the ledger (the request log itself lives in Redis)

Revision ID: 0007_request_log_keys
Revises: 0005_checkout_url
Create Date: 2026-11-24 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_request_log_keys"
down_revision: str | None = "0005_checkout_url"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_column("last_used_at")
        batch_op.drop_column("expires_at")
