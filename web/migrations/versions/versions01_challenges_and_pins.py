"""Challenges (unrated matches an author asks for), the version a bot's owner chose to play,
and deleted bots.

Revision ID: versions01
Revises: names01
Create Date: 2026-11-27 17:00:00

"""

import sqlalchemy as sa
from alembic import op


revision = "versions01"
down_revision = "names01"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "challenges",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("ladder_id", sa.Integer(), nullable=False),
        sa.Column("entries", sa.JSON(), nullable=False),
        sa.Column("deals", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_challenges_user_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["ladder_id"], ["ladders.id"], name=op.f("fk_challenges_ladder_id_ladders")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_challenges")),
    )
    op.create_index("ix_challenges_user_created", "challenges", ["user_id", "created_at"])
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("challenge_id", sa.Integer(), nullable=True))
        batch.create_index(batch.f("ix_matches_challenge_id"), ["challenge_id"])
        batch.create_foreign_key(
            batch.f("fk_matches_challenge_id_challenges"), "challenges", ["challenge_id"], ["id"]
        )
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("pinned_number", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("deleted_at", sa.DateTime(), nullable=True))


def downgrade():
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("deleted_at")
        batch.drop_column("pinned_number")
    with op.batch_alter_table("matches") as batch:
        batch.drop_constraint(batch.f("fk_matches_challenge_id_challenges"), type_="foreignkey")
        batch.drop_index(batch.f("ix_matches_challenge_id"))
        batch.drop_column("challenge_id")
    op.drop_index("ix_challenges_user_created", table_name="challenges")
    op.drop_table("challenges")
