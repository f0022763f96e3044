"""admin_actions: the audit trail of `geosvc admin`

Revision ID: 0003_ops
Revises: 0002_stripe
Create Date: 2026-11-23 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

revision: str = "0003_ops"
down_revision: str | None = "0002_stripe"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "admin_actions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", AutoString(length=200), nullable=False),
        sa.Column("action", AutoString(length=32), nullable=False),
        sa.Column("user_id", AutoString(length=40), nullable=False),
        sa.Column("reason", AutoString(length=500), nullable=False),
        sa.Column("details", AutoString(length=2000), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("admin_actions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_admin_actions_at"), ["at"], unique=False)
        batch_op.create_index(batch_op.f("ix_admin_actions_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("admin_actions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_admin_actions_user_id"))
        batch_op.drop_index(batch_op.f("ix_admin_actions_at"))
    op.drop_table("admin_actions")
