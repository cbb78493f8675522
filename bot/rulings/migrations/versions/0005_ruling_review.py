"""What a server ruling's rule said when the ruling was made, and the "needs review" flag when it changed
(issue 18). Placeholder: filled in by the ruling-review work.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26
"""

from __future__ import annotations

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
