"""Indexes for a million matches: a ladder's matches by status (the scheduler's pending count)
and matches by finish time (the workers seen lately, on the home page).

Revision ID: scale01
Revises: versions01
Create Date: 2026-11-27 17:10:00

"""

from alembic import op

revision = "scale01"
down_revision = "versions01"
branch_labels = None
depends_on = None


def upgrade():
    op.create_index("ix_matches_ladder_status", "matches", ["ladder_id", "status"])
    op.create_index("ix_matches_finished_at", "matches", ["finished_at"])


def downgrade():
    op.drop_index("ix_matches_finished_at", table_name="matches")
    op.drop_index("ix_matches_ladder_status", table_name="matches")
