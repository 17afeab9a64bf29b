"""Seeds of 64 bits: match and tournament seeds in BIGINT columns; a tournament's seed optional.

A tournament without a seed draws every deal from the operating system's CSPRNG.

Revision ID: seal01
Revises: auth01
Create Date: 2026-11-24 01:00:00

"""
import sqlalchemy as sa
from alembic import op


revision = 'seal01'
down_revision = 'auth01'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('matches') as batch:
        batch.alter_column(
            'seed', existing_type=sa.Integer(), type_=sa.BigInteger(), existing_nullable=False
        )
    with op.batch_alter_table('tournaments') as batch:
        batch.alter_column(
            'seed', existing_type=sa.Integer(), type_=sa.BigInteger(), nullable=True
        )


def downgrade():
    # Seeds beyond 32 bits do not fit the old columns: they are kept as their low 31 bits.
    op.execute('UPDATE matches SET seed = seed & 2147483647')
    op.execute('UPDATE tournaments SET seed = COALESCE(seed, 0) & 2147483647')
    with op.batch_alter_table('tournaments') as batch:
        batch.alter_column(
            'seed', existing_type=sa.BigInteger(), type_=sa.Integer(), nullable=False
        )
    with op.batch_alter_table('matches') as batch:
        batch.alter_column(
            'seed', existing_type=sa.BigInteger(), type_=sa.Integer(), existing_nullable=False
        )
