"""Each seat's think time per move (moves, median, 90th percentile, most) and the indexes a
bot's statistics read.

Revision ID: stats01
Revises: scale01
Create Date: 2026-11-27 18:10:00

"""

import sqlalchemy as sa
from alembic import op


revision = "stats01"
down_revision = "scale01"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("match_seats") as batch:
        batch.add_column(sa.Column("moves", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("think_ms_p50", sa.Double(), nullable=True))
        batch.add_column(sa.Column("think_ms_p90", sa.Double(), nullable=True))
        batch.add_column(sa.Column("think_ms_max", sa.Double(), nullable=True))
        batch.create_index("ix_match_seats_version_match", ["bot_version_id", "match_id"])
        batch.create_index("ix_match_seats_bot_status_match", ["bot_id", "status", "match_id"])


def downgrade():
    with op.batch_alter_table("match_seats") as batch:
        batch.drop_index("ix_match_seats_bot_status_match")
        batch.drop_index("ix_match_seats_version_match")
        batch.drop_column("think_ms_max")
        batch.drop_column("think_ms_p90")
        batch.drop_column("think_ms_p50")
        batch.drop_column("moves")
