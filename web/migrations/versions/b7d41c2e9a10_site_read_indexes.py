"""Site read indexes: a bot's matches, ladder placements and trends, rating histories.

Revision ID: b7d41c2e9a10
Revises: 6acc8e771ac1
Create Date: 2026-11-22 11:45:00

"""
from alembic import op


revision = 'b7d41c2e9a10'
down_revision = '6acc8e771ac1'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_match_seats_bot_match', 'match_seats', ['bot_id', 'match_id'])
    op.create_index(
        'ix_rating_changes_ladder_bot', 'rating_changes', ['ladder_id', 'bot_id', 'id', 'place']
    )
    op.create_index('ix_rating_changes_bot_ladder', 'rating_changes', ['bot_id', 'ladder_id', 'id'])


def downgrade():
    op.drop_index('ix_rating_changes_bot_ladder', table_name='rating_changes')
    op.drop_index('ix_rating_changes_ladder_bot', table_name='rating_changes')
    op.drop_index('ix_match_seats_bot_match', table_name='match_seats')
