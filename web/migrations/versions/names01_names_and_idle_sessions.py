"""A user name is unique whatever its case; sessions know when they were last used.

Revision ID: names01
Revises: faults2
Create Date: 2026-11-24 02:35:00

Names that already clash (``Alice`` and ``alice``) stop the upgrade with a message naming them:
which account keeps the name is the operator's decision, so nothing is renamed here. Rename one
of each pair (``UPDATE users SET username = ... WHERE id = ...``) and run the upgrade again.
"""

import sqlalchemy as sa
from alembic import op

revision = "names01"
down_revision = "faults2"
branch_labels = None
depends_on = None


def _clashing_names() -> list[str]:
    rows = op.get_bind().execute(
        sa.text(
            "SELECT lower(username) FROM users GROUP BY lower(username) HAVING count(*) > 1"
            " ORDER BY lower(username)"
        )
    )
    return [str(row[0]) for row in rows]


def upgrade():
    clashing = _clashing_names()
    if clashing:
        raise RuntimeError(
            "user names that differ only in case exist; rename all but one of each and upgrade"
            " again: " + ", ".join(clashing)
        )
    with op.batch_alter_table("user_sessions") as batch:
        batch.add_column(sa.Column("last_seen_at", sa.DateTime(), nullable=True))
    op.execute("UPDATE user_sessions SET last_seen_at = created_at")
    with op.batch_alter_table("user_sessions") as batch:
        batch.alter_column("last_seen_at", existing_type=sa.DateTime(), nullable=False)
    # An index on an expression: on SQLite, a later batch_alter_table("users") (which copies the
    # table) cannot reflect it and would drop it; such a migration must create it again.
    op.create_index("uq_users_username_lower", "users", [sa.text("lower(username)")], unique=True)


def downgrade():
    op.drop_index("uq_users_username_lower", table_name="users")
    with op.batch_alter_table("user_sessions") as batch:
        batch.drop_column("last_seen_at")
