"""A reviewer's score is edited in place: it counts its edits (`row_version`) so that a save
from a stale tab is refused with 412 instead of replacing a newer score (issue 31 item 5).

Revision ID: wr2a3b4c5d6e
Revises: lg2a7c9e1f3b5d
Create Date: 2026-12-07 09:50:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'wr2a3b4c5d6e'
down_revision = 'lg2a7c9e1f3b5d'
branch_labels = None
depends_on = None


def upgrade():
    # a constant default: no table rewrite on PostgreSQL, whatever the number of scores
    op.add_column('scores', sa.Column('row_version', sa.Integer(), nullable=False,
                                      server_default=sa.text('1')))


def downgrade():
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.drop_column('row_version')
