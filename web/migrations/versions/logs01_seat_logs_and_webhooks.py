"""Seats' whole stderr logs, bot events and owners' webhooks.

Revision ID: logs01
Revises: stats01
Create Date: 2026-11-27 18:00:00

"""

import sqlalchemy as sa
from alembic import op


revision = "logs01"
down_revision = "stats01"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("match_seats") as batch:
        batch.add_column(sa.Column("log_bytes", sa.Integer(), nullable=True))
    op.create_table(
        "bot_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name=op.f("fk_bot_events_bot_id_bots")),
        sa.ForeignKeyConstraint(
            ["version_id"], ["bot_versions.id"], name=op.f("fk_bot_events_version_id_bot_versions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bot_events")),
    )
    op.create_index("ix_bot_events_bot_created", "bot_events", ["bot_id", "created_at"])
    op.create_table(
        "webhooks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("secret", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_webhooks_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhooks")),
    )
    op.create_index(op.f("ix_webhooks_user_id"), "webhooks", ["user_id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("webhook_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("tries", sa.Integer(), nullable=False),
        sa.Column("last_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("done_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhooks.id"],
            name=op.f("fk_webhook_deliveries_webhook_id_webhooks"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["event_id"], ["bot_events.id"], name=op.f("fk_webhook_deliveries_event_id_bot_events")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    op.create_index(
        "ix_webhook_deliveries_hook_created", "webhook_deliveries", ["webhook_id", "created_at"]
    )
    op.create_index(
        op.f("ix_webhook_deliveries_event_id"), "webhook_deliveries", ["event_id"]
    )


def downgrade():
    op.drop_table("webhook_deliveries")
    op.drop_table("webhooks")
    op.drop_index("ix_bot_events_bot_created", table_name="bot_events")
    op.drop_table("bot_events")
    with op.batch_alter_table("match_seats") as batch:
        batch.drop_column("log_bytes")
