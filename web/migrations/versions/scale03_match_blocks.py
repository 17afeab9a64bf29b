"""The number of matches per block of 4,096 ids (``match_blocks``), kept by the triggers that
keep the match total, so a deep page of the match list and the length of the list below an id
read a few hundred numbers and at most one block of ids instead of walking the whole index.
And an index on the versions' status and count of ladder matches: the bots still placing on a
ladder are found without reading every active version.

Revision ID: scale03
Revises: scale02
Create Date: 2026-11-28 03:45:00

"""

import sqlalchemy as sa
from alembic import op

revision = "scale03"
down_revision = "scale02"
branch_labels = None
depends_on = None

BLOCK = 4096  # web.models.MATCH_BLOCK

COUNTING = f"""
CREATE OR REPLACE FUNCTION match_totals_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    delta BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT count(*) INTO delta FROM added;
        INSERT INTO match_blocks (block, matches)
        SELECT id / {BLOCK}, count(*) FROM added GROUP BY id / {BLOCK} ORDER BY 1
        ON CONFLICT (block) DO UPDATE SET matches = match_blocks.matches + EXCLUDED.matches;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT -count(*) INTO delta FROM removed;
        UPDATE match_blocks SET matches = match_blocks.matches - gone.n
          FROM (SELECT id / {BLOCK} AS block, count(*) AS n FROM removed GROUP BY 1) AS gone
         WHERE match_blocks.block = gone.block;
    ELSE
        DELETE FROM match_totals;
        INSERT INTO match_totals (id, matches) VALUES (1, 0);
        DELETE FROM match_blocks;
        RETURN NULL;
    END IF;
    INSERT INTO match_totals (id, matches) VALUES (1, delta)
    ON CONFLICT (id) DO UPDATE SET matches = match_totals.matches + EXCLUDED.matches;
    RETURN NULL;
END
$$"""
"""The function of migration ``scale02``'s triggers, now keeping the blocks too."""

TOTALS_ONLY = """
CREATE OR REPLACE FUNCTION match_totals_count() RETURNS trigger LANGUAGE plpgsql AS $$
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
$$"""


def upgrade() -> None:
    op.create_table(
        "match_blocks",
        sa.Column("block", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("matches", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("block", name=op.f("pk_match_blocks")),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("LOCK TABLE matches IN SHARE MODE")  # no insert between function and count
        op.execute(COUNTING)
        op.execute(
            f"INSERT INTO match_blocks (block, matches)"
            f" SELECT id / {BLOCK}, count(*) FROM matches GROUP BY 1"
        )
    op.create_index(
        "ix_bot_versions_status_matches", "bot_versions", ["status", "ladder_matches", "bot_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_bot_versions_status_matches", table_name="bot_versions")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(TOTALS_ONLY)
    op.drop_table("match_blocks")
