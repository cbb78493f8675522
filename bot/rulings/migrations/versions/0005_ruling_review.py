"""What a server ruling's rule said when the ruling was made, and the "needs review" flag when it changed
(issue 18): ``ruling_basis`` (one row per ruling and entry it applies to) and ``rulings.review_since``.

Rulings made before this revision have no rows: the first check after a start records the text then in
force, without flagging them (bot.rulings.review).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rulings") as batch:
        batch.add_column(sa.Column("review_since", sa.String(10), nullable=True))
    op.create_table(
        "ruling_basis",
        sa.Column("ruling_id", sa.Integer, nullable=False),
        sa.Column("entry_id", sa.Text, nullable=False),
        sa.Column("scope", sa.String(64), nullable=False),
        sa.Column("digest", sa.String(16), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("stamp", sa.String(10)),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("ruling_id", "entry_id", name="pk_ruling_basis"),
        sa.ForeignKeyConstraint(["ruling_id"], ["rulings.id"], name="fk_ruling_basis_ruling_id_rulings"),
    )
    op.create_index("ix_ruling_basis_scope", "ruling_basis", ["scope"])


def downgrade() -> None:
    op.drop_index("ix_ruling_basis_scope", table_name="ruling_basis")
    op.drop_table("ruling_basis")
    with op.batch_alter_table("rulings") as batch:
        batch.drop_column("review_since")
