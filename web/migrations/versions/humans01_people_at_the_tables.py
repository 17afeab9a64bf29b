"""People at the tables: a bot's kind (a person's seat is a bot of kind human), the owner's
opt-in that lets people play against a bot, and the human ladders' ratings.

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
    op.create_table(
        "human_ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=48), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("person", sa.Boolean(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"], ["bots.id"], name=op.f("fk_human_ratings_bot_id_bots")
        ),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_human_ratings_bot_version_id_bot_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_human_ratings")),
        sa.UniqueConstraint("game", "bot_version_id", name=op.f("uq_human_ratings_game")),
    )
    op.create_index(op.f("ix_human_ratings_bot_id"), "human_ratings", ["bot_id"])


def downgrade():
    op.drop_index(op.f("ix_human_ratings_bot_id"), table_name="human_ratings")
    op.drop_table("human_ratings")
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("humans_may_play")
        batch.drop_column("kind")
