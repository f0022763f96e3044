"""users.generation and email_tokens.generation: an e-mail link dies when the account
it belongs to is reclaimed (a password reset), confirmed or moved

Revision ID: 0009_account_generation
Revises: 0007_request_log_keys
Create Date: 2026-11-26 19:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_account_generation"
down_revision: str | None = "0007_request_log_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for table in ("users", "email_tokens"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("generation", sa.Integer(), nullable=False, server_default="0")
            )


def downgrade() -> None:
    for table in ("email_tokens", "users"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("generation")
