"""subscriptions.checkout_url and checkout_expires_at: reads show a pending checkout
without asking the payment provider

Revision ID: 0005_checkout_url
Revises: 0004_credit_cap
Create Date: 2026-11-23 22:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_checkout_url"
down_revision: str | None = "0004_credit_cap"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("checkout_url", sa.Text(), nullable=True))
        batch_op.add_column(
            sa.Column("checkout_expires_at", sa.DateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_column("checkout_expires_at")
        batch_op.drop_column("checkout_url")
