"""Matches count their own faults and their lost workers apart from claims.

Revision ID: faults01
Revises: b7d41c2e9a10
Create Date: 2026-11-24 00:50:00

"""
import sqlalchemy as sa
from alembic import op


revision = 'faults01'
down_revision = 'b7d41c2e9a10'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('matches') as batch:
        batch.add_column(sa.Column('faults', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(
            sa.Column('lost_workers', sa.Integer(), nullable=False, server_default='0')
        )


def downgrade():
    with op.batch_alter_table('matches') as batch:
        batch.drop_column('lost_workers')
        batch.drop_column('faults')
