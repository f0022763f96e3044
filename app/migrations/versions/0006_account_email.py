"""Accounts by e-mail: verified addresses, one account per mailbox, e-mail links (tokens
stored as hashes), deleted accounts kept as anonymous rows, usage alerts sent

Accounts that exist before this revision count as verified (they signed up before
verification existed). Their mailbox (the address without a +tag, Gmail without dots)
is set on the oldest account of each mailbox only: later duplicates keep working, but a
new sign-up cannot add another.

Revision ID: 0006_account_email
Revises: 0005_checkout_url
Create Date: 2026-11-24 01:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

revision: str = "0006_account_email"
down_revision: str | None = "0005_checkout_url"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GMAIL_DOMAINS = ("gmail.com", "googlemail.com")


def _mailbox(email: str) -> str:
    """A copy of app.users.mailbox.mailbox_of as it was at this revision."""
    local, _, domain = email.strip().lower().rpartition("@")
    untagged = local.split("+", 1)[0] or local
    if domain in GMAIL_DOMAINS:
        return f"{untagged.replace('.', '') or untagged}@gmail.com"
    return f"{untagged}@{domain}"


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("email_verified_at", sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("mailbox", AutoString(length=320), nullable=True))
        batch_op.add_column(sa.Column("pending_email", AutoString(length=320), nullable=True))
        batch_op.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
    users = sa.table(
        "users",
        sa.column("id", sa.String),
        sa.column("email", sa.String),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("email_verified_at", sa.DateTime(timezone=True)),
        sa.column("mailbox", sa.String),
    )
    bind = op.get_bind()
    bind.execute(sa.update(users).values(email_verified_at=users.c.created_at))
    seen: set[str] = set()
    rows = bind.execute(sa.select(users.c.id, users.c.email).order_by(users.c.created_at))
    for user_id, email in list(rows):
        mailbox = _mailbox(str(email))
        if mailbox not in seen:
            seen.add(mailbox)
            bind.execute(sa.update(users).where(users.c.id == user_id).values(mailbox=mailbox))
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_users_mailbox"), ["mailbox"], unique=True)

    op.create_table(
        "email_tokens",
        sa.Column("token_hash", AutoString(length=64), nullable=False),
        sa.Column("user_id", AutoString(length=40), nullable=False),
        sa.Column("purpose", AutoString(length=16), nullable=False),
        sa.Column("email", AutoString(length=320), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    with op.batch_alter_table("email_tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_email_tokens_user_id"), ["user_id"], unique=False)

    op.create_table(
        "usage_alerts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", AutoString(length=40), nullable=False),
        sa.Column("period", AutoString(length=7), nullable=False),
        sa.Column("kind", AutoString(length=16), nullable=False),
        sa.Column("quota", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("user_id", "period", "kind", "quota"),
    )
    with op.batch_alter_table("usage_alerts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_usage_alerts_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("usage_alerts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_usage_alerts_user_id"))
    op.drop_table("usage_alerts")
    with op.batch_alter_table("email_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_email_tokens_user_id"))
    op.drop_table("email_tokens")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_users_mailbox"))
        batch_op.drop_column("deleted_at")
        batch_op.drop_column("pending_email")
        batch_op.drop_column("mailbox")
        batch_op.drop_column("email_verified_at")
