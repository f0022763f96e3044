"""jobs and job_chunks: bulk jobs (app/jobs)

Revision ID: 0010_jobs_tables
Revises: 0009_account_generation
Create Date: 2026-12-07 11:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0010_jobs_tables"
down_revision: str | None = "0009_account_generation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("key_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("tool", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("origin", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("rows_total", sa.Integer(), nullable=False),
        sa.Column("chunk_rows", sa.Integer(), nullable=False),
        sa.Column("chunks_total", sa.Integer(), nullable=False),
        sa.Column("rows_done", sa.Integer(), nullable=False),
        sa.Column("rows_with_data", sa.Integer(), nullable=False),
        sa.Column("rows_with_errors", sa.Integer(), nullable=False),
        sa.Column("credits", sa.Integer(), nullable=False),
        sa.Column("stop_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_jobs_user_id"), ["user_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_status"), ["status"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_expires_at"), ["expires_at"], unique=False)
    op.create_table(
        "job_chunks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("first_row", sa.Integer(), nullable=False),
        sa.Column("state", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("items", sa.Text(), nullable=False),
        sa.Column("results", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "index"),
    )
    with op.batch_alter_table("job_chunks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_job_chunks_job_id"), ["job_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("job_chunks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_job_chunks_job_id"))
    op.drop_table("job_chunks")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_expires_at"))
        batch_op.drop_index(batch_op.f("ix_jobs_status"))
        batch_op.drop_index(batch_op.f("ix_jobs_user_id"))
    op.drop_table("jobs")
