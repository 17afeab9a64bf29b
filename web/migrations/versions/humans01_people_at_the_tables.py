"""People at the tables: a bot's kind (a person's seat is a bot of kind human) and the owner's
opt-in that lets people play against a bot.

Revision ID: humans01
Revises: logs01
Create Date: 2026-11-27 20:30:00

"""

import sqlalchemy as sa
from alembic import op


revision = "humans01"
down_revision = "logs01"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("kind", sa.String(length=8), nullable=False, server_default="bot"))
        batch.add_column(
            sa.Column("humans_may_play", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade():
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("humans_may_play")
        batch.drop_column("kind")
