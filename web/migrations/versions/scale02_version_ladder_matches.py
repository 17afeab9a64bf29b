"""Each version counts its finished ladder matches (``bot_versions.ladder_matches``), so the
scheduler and the pages know a version's placement without reading its matches; filled in from
the matches already played.

Revision ID: scale02
Revises: logs01
Create Date: 2026-11-27 20:10:00

"""

import sqlalchemy as sa
from alembic import op

revision = "scale02"
down_revision = "logs01"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("bot_versions") as batch:
        batch.add_column(
            sa.Column("ladder_matches", sa.Integer(), nullable=False, server_default="0")
        )
    if op.get_bind().dialect.name == "postgresql":  # one pass over the seats
        op.execute(
            "UPDATE bot_versions SET ladder_matches = played.n FROM ("
            " SELECT s.bot_version_id AS id, count(*) AS n FROM match_seats s"
            " JOIN matches m ON m.id = s.match_id"
            " WHERE m.kind = 'ladder' AND m.status = 'finished'"
            " GROUP BY s.bot_version_id) AS played"
            " WHERE bot_versions.id = played.id"
        )
    else:
        op.execute(
            "UPDATE bot_versions SET ladder_matches = ("
            " SELECT count(*) FROM match_seats s JOIN matches m ON m.id = s.match_id"
            " WHERE s.bot_version_id = bot_versions.id"
            " AND m.kind = 'ladder' AND m.status = 'finished')"
        )


def downgrade():
    with op.batch_alter_table("bot_versions") as batch:
        batch.drop_column("ladder_matches")
