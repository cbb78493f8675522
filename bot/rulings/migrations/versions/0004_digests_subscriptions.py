"""Source snapshots, the digests sent between two versions of the sources, and channels subscribed to them
(issue 18: /changes subscribe).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "source_snapshots",
        sa.Column("fingerprint", sa.String(64)),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("fingerprint", name="pk_source_snapshots"),
    )
    op.create_table(
        "source_head",
        sa.Column("name", sa.String(32)),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("generation", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_source_head"),
    )
    op.create_table(
        "digests",
        sa.Column("id", sa.Integer, autoincrement=True),
        sa.Column("generation", sa.BigInteger, nullable=False),
        sa.Column("old_fingerprint", sa.String(64), nullable=False),
        sa.Column("new_fingerprint", sa.String(64), nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_digests"),
        sa.UniqueConstraint("generation", name="uq_digests_generation"),
    )
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Integer, autoincrement=True),
        sa.Column("scope", sa.String(64), nullable=False),
        sa.Column("channel_id", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_by", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("failed_at", sa.DateTime(timezone=True)),
        sa.Column("failure", sa.Text),
        sa.PrimaryKeyConstraint("id", name="pk_subscriptions"),
        sa.ForeignKeyConstraint(["scope"], ["scopes.scope"], name="fk_subscriptions_scope_scopes"),
        sa.UniqueConstraint("scope", "channel_id", name="uq_subscriptions_scope_channel"),
    )
    op.create_table(
        "digest_deliveries",
        sa.Column("id", sa.Integer, autoincrement=True),
        sa.Column("digest_id", sa.Integer, nullable=False),
        sa.Column("subscription_id", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True)),
        sa.Column("message_id", sa.String(32)),
        sa.Column("error", sa.Text),
        sa.PrimaryKeyConstraint("id", name="pk_digest_deliveries"),
        sa.ForeignKeyConstraint(["digest_id"], ["digests.id"], name="fk_digest_deliveries_digest_id_digests"),
        sa.ForeignKeyConstraint(
            ["subscription_id"], ["subscriptions.id"], name="fk_digest_deliveries_subscription_id_subscriptions"
        ),
        sa.UniqueConstraint("digest_id", "subscription_id", name="uq_digest_deliveries_digest_subscription"),
    )


def downgrade() -> None:
    op.drop_table("digest_deliveries")
    op.drop_table("subscriptions")
    op.drop_table("digests")
    op.drop_table("source_head")
    op.drop_table("source_snapshots")
