"""Bot versions carry a claim on their build: attempts, lost workers, lease, when it is due.

Revision ID: faults2
Revises: seal01
Create Date: 2026-11-24 01:35:00

"""

import sqlalchemy as sa
from alembic import op


revision = "faults2"
down_revision = "seal01"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("bot_versions") as batch:
        batch.add_column(
            sa.Column("prepare_attempts", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("prepare_lost", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("prepare_lease_until", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("prepare_due", sa.DateTime(), nullable=True))


def downgrade():
    with op.batch_alter_table("bot_versions") as batch:
        batch.drop_column("prepare_due")
        batch.drop_column("prepare_lease_until")
        batch.drop_column("prepare_lost")
        batch.drop_column("prepare_attempts")
