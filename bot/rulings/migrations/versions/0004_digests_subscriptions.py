"""Source snapshots, the digests sent between two versions of the sources, and channels subscribed to them
(issue 18: /changes subscribe). Placeholder: filled in by the digest work.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""

from __future__ import annotations

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
