"""User sessions: one row per logged-in browser, so that logging out ends it on the server.

Revision ID: auth01
Revises: faults01
Create Date: 2026-11-24 00:40:00

"""
import sqlalchemy as sa
from alembic import op


revision = 'auth01'
down_revision = 'faults01'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'user_sessions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('key_hash', sa.String(length=64), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ['user_id'], ['users.id'], name=op.f('fk_user_sessions_user_id_users')
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_user_sessions')),
        sa.UniqueConstraint('key_hash', name=op.f('uq_user_sessions_key_hash')),
    )
    op.create_index(op.f('ix_user_sessions_user_id'), 'user_sessions', ['user_id'])


def downgrade():
    op.drop_index(op.f('ix_user_sessions_user_id'), table_name='user_sessions')
    op.drop_table('user_sessions')
