"""oauth: clients (dynamic registration and Client ID Metadata Documents), grants (the
connected apps), authorization codes and tokens, all secrets hashed

Revision ID: 0008_oauth
Revises: 0006_account_email
Create Date: 2026-11-24 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

revision: str = "0008_oauth"
down_revision: str | None = "0006_account_email"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _utc(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "oauth_clients",
        sa.Column("client_id", AutoString(length=512), nullable=False),
        sa.Column("kind", AutoString(length=8), nullable=False),
        sa.Column("client_name", AutoString(length=100), nullable=False),
        sa.Column("client_uri", AutoString(length=512), nullable=True),
        sa.Column("redirect_uris", sa.Text(), nullable=False),
        sa.Column("grant_types", AutoString(length=100), nullable=False),
        sa.Column("token_endpoint_auth_method", AutoString(length=32), nullable=False),
        sa.Column("client_secret_hash", AutoString(length=64), nullable=True),
        _utc("created_at"),
        _utc("metadata_expires_at", nullable=True),
        sa.PrimaryKeyConstraint("client_id"),
    )
    op.create_table(
        "oauth_grants",
        sa.Column("id", AutoString(length=32), nullable=False),
        sa.Column("user_id", AutoString(length=40), nullable=False),
        sa.Column("client_id", AutoString(length=512), nullable=False),
        sa.Column("scope", AutoString(length=200), nullable=False),
        _utc("created_at"),
        _utc("revoked_at", nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.ForeignKeyConstraint(["client_id"], ["oauth_clients.client_id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("oauth_grants", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_grants_user_id"), ["user_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_oauth_grants_client_id"), ["client_id"], unique=False)
    op.create_table(
        "oauth_codes",
        sa.Column("code_hash", AutoString(length=64), nullable=False),
        sa.Column("grant_id", AutoString(length=32), nullable=False),
        sa.Column("client_id", AutoString(length=512), nullable=False),
        sa.Column("redirect_uri", sa.Text(), nullable=False),
        sa.Column("scope", AutoString(length=200), nullable=False),
        sa.Column("resource", AutoString(length=512), nullable=False),
        sa.Column("code_challenge", AutoString(length=128), nullable=False),
        sa.Column("code_challenge_method", AutoString(length=8), nullable=False),
        _utc("created_at"),
        _utc("expires_at"),
        _utc("used_at", nullable=True),
        sa.ForeignKeyConstraint(["grant_id"], ["oauth_grants.id"]),
        sa.PrimaryKeyConstraint("code_hash"),
    )
    with op.batch_alter_table("oauth_codes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_codes_grant_id"), ["grant_id"], unique=False)
    op.create_table(
        "oauth_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("grant_id", AutoString(length=32), nullable=False),
        sa.Column("family", AutoString(length=64), nullable=False),
        sa.Column("access_token_hash", AutoString(length=64), nullable=False),
        sa.Column("refresh_token_hash", AutoString(length=64), nullable=True),
        sa.Column("scope", AutoString(length=200), nullable=False),
        sa.Column("resource", AutoString(length=512), nullable=False),
        _utc("created_at"),
        _utc("access_expires_at"),
        _utc("refresh_expires_at", nullable=True),
        _utc("refresh_used_at", nullable=True),
        _utc("revoked_at", nullable=True),
        sa.ForeignKeyConstraint(["grant_id"], ["oauth_grants.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("access_token_hash"),
        sa.UniqueConstraint("refresh_token_hash"),
    )
    with op.batch_alter_table("oauth_tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_tokens_grant_id"), ["grant_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_oauth_tokens_family"), ["family"], unique=False)


def downgrade() -> None:
    op.drop_table("oauth_tokens")
    op.drop_table("oauth_codes")
    op.drop_table("oauth_grants")
    op.drop_table("oauth_clients")
