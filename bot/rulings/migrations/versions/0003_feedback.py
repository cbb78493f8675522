"""Players' "Not the answer?" reports and the question -> paragraph pairs a server's judges confirmed.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer, autoincrement=True),
        sa.Column("scope", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("entry_id", sa.Text),
        sa.Column("paragraph", sa.Integer),
        sa.Column("digest", sa.String(16)),
        sa.Column("reporter_id", sa.String(32)),
        sa.Column("reported_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reviewed_by", sa.String(32)),
        sa.Column("reviewed_at", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("id", name="pk_feedback"),
        sa.ForeignKeyConstraint(["scope"], ["scopes.scope"], name="fk_feedback_scope_scopes"),
    )
    op.create_index("ix_feedback_scope_status", "feedback", ["scope", "status"])


def downgrade() -> None:
    op.drop_index("ix_feedback_scope_status", table_name="feedback")
    op.drop_table("feedback")
