"""Each version counts its finished ladder matches (``bot_versions.ladder_matches``), so the
scheduler and the pages know a version's placement without reading its matches; filled in from
the matches already played. And the number of matches (``match_totals``), kept by triggers on
PostgreSQL, so the match list need not count them all.

Revision ID: scale02
Revises: humans01
Create Date: 2026-11-27 20:10:00

"""

import sqlalchemy as sa
from alembic import op

revision = "scale02"
down_revision = "humans01"
branch_labels = None
depends_on = None


def upgrade():
    _totals()
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


TOTALS = [
    """
CREATE FUNCTION match_totals_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    delta BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT count(*) INTO delta FROM added;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT -count(*) INTO delta FROM removed;
    ELSE
        DELETE FROM match_totals;
        INSERT INTO match_totals (id, matches) VALUES (1, 0);
        RETURN NULL;
    END IF;
    INSERT INTO match_totals (id, matches) VALUES (1, delta)
    ON CONFLICT (id) DO UPDATE SET matches = match_totals.matches + EXCLUDED.matches;
    RETURN NULL;
END
$$""",
    "CREATE TRIGGER matches_counted_insert AFTER INSERT ON matches"
    " REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION match_totals_count()",
    "CREATE TRIGGER matches_counted_delete AFTER DELETE ON matches"
    " REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION match_totals_count()",
    "CREATE TRIGGER matches_counted_truncate AFTER TRUNCATE ON matches"
    " FOR EACH STATEMENT EXECUTE FUNCTION match_totals_count()",
    "INSERT INTO match_totals (id, matches) SELECT 1, count(*) FROM matches",
]
"""Statements, in order: the trigger function, its three triggers, the count of today."""


def _totals():
    op.create_table(
        "match_totals",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("matches", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_match_totals")),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("LOCK TABLE matches IN SHARE MODE")  # no insert between trigger and count
        for statement in TOTALS:
            op.execute(statement)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        for name in ("insert", "delete", "truncate"):
            op.execute(f"DROP TRIGGER matches_counted_{name} ON matches")
        op.execute("DROP FUNCTION match_totals_count()")
    op.drop_table("match_totals")
    with op.batch_alter_table("bot_versions") as batch:
        batch.drop_column("ladder_matches")
