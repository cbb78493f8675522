"""The formats a server plays (issue 18: /ruling config formats): ``scopes.formats``, a JSON list of format ids
(``glossary.formats``); NULL while the server has chosen nothing (answers then show every format).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("scopes") as batch:
        batch.add_column(sa.Column("formats", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("scopes") as batch:
        batch.drop_column("formats")
