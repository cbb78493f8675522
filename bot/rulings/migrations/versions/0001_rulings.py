"""Rulings per server: scopes, rulings, their versions, and process-wide counters.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "scopes",
        sa.Column("scope", sa.String(64), primary_key=True),
        sa.Column("revision", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("judge_role_id", sa.String(32)),
        sa.Column("audit_channel_id", sa.String(32)),
        sa.Column("updated_at", sa.DateTime(timezone=True)),
        sa.Column("updated_by", sa.String(64)),
        sa.PrimaryKeyConstraint("scope", name="pk_scopes"),
    )
    op.create_table(
        "rulings",
        sa.Column("id", sa.Integer, autoincrement=True),
        sa.Column("scope", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("applies_to", sa.Text, nullable=False),
        sa.Column("event", sa.Text),
        sa.Column("judge", sa.Text),
        sa.Column("ruled_on", sa.String(10), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_rulings"),
        sa.ForeignKeyConstraint(["scope"], ["scopes.scope"], name="fk_rulings_scope_scopes"),
    )
    op.create_index("ix_rulings_scope_status", "rulings", ["scope", "status"])
    op.create_table(
        "ruling_versions",
        sa.Column("id", sa.Integer, autoincrement=True),
        sa.Column("ruling_id", sa.Integer, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("applies_to", sa.Text, nullable=False),
        sa.Column("event", sa.Text),
        sa.Column("judge", sa.Text),
        sa.Column("ruled_on", sa.String(10), nullable=False),
        sa.Column("note", sa.Text),
        sa.Column("author_id", sa.String(32), nullable=False),
        sa.Column("author_name", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_ruling_versions"),
        sa.ForeignKeyConstraint(["ruling_id"], ["rulings.id"], name="fk_ruling_versions_ruling_id_rulings"),
        sa.UniqueConstraint("ruling_id", "version", name="uq_ruling_versions_ruling_version"),
    )
    counters = op.create_table(
        "counters",
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("value", sa.BigInteger, nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("name", name="pk_counters"),
    )
    op.bulk_insert(counters, [{"name": "rulings", "value": 0}, {"name": "reload", "value": 0}])


def downgrade() -> None:
    op.drop_table("counters")
    op.drop_table("ruling_versions")
    op.drop_index("ix_rulings_scope_status", table_name="rulings")
    op.drop_table("rulings")
    op.drop_table("scopes")
