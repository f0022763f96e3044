"""stripe: customers, processed webhook events, overage meter reports; longer checkout ids

Revision ID: 0002_stripe
Revises: 0001
Create Date: 2026-11-23 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

revision: str = "0002_stripe"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "stripe_customers",
        sa.Column("user_id", AutoString(length=40), nullable=False),
        sa.Column("customer_id", AutoString(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("user_id"),
        sa.UniqueConstraint("customer_id"),
    )
    op.create_table(
        "stripe_webhook_events",
        sa.Column("event_id", AutoString(length=255), nullable=False),
        sa.Column("type", AutoString(length=100), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
    )
    op.create_table(
        "stripe_meter_reports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", AutoString(length=40), nullable=False),
        sa.Column("customer_id", AutoString(length=255), nullable=False),
        sa.Column("period", AutoString(length=7), nullable=False),
        sa.Column("overage_from", sa.Integer(), nullable=False),
        sa.Column("overage_to", sa.Integer(), nullable=False),
        sa.Column("identifier", AutoString(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("identifier"),
        sa.UniqueConstraint("user_id", "period", "overage_from"),
    )
    with op.batch_alter_table("stripe_meter_reports", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_stripe_meter_reports_user_id"), ["user_id"], unique=False
        )
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.alter_column(
            "checkout_id",
            existing_type=AutoString(length=64),
            type_=AutoString(length=255),
            existing_nullable=True,
        )


def downgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.alter_column(
            "checkout_id",
            existing_type=AutoString(length=255),
            type_=AutoString(length=64),
            existing_nullable=True,
        )
    with op.batch_alter_table("stripe_meter_reports", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_stripe_meter_reports_user_id"))
    op.drop_table("stripe_meter_reports")
    op.drop_table("stripe_webhook_events")
    op.drop_table("stripe_customers")
