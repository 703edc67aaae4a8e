"""Editable rows count their writes (`row_version`): a write based on an older version is
refused with 412 instead of replacing newer work (issue 31 item 5).

Revision ID: wr1a2b3c4d5e
Revises: lg1a2b3c4d5e
Create Date: 2026-12-07 06:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'wr1a2b3c4d5e'
down_revision = 'lg1a2b3c4d5e'
branch_labels = None
depends_on = None

TABLES = ('experiments', 'datasets', 'projects', 'memberships', 'arena_drafts', 'prompts',
          'scorer_configs', 'credentials', 'model_configs', 'runs')


def upgrade():
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('row_version', sa.Integer(), nullable=False,
                                          server_default=sa.text('1')))


def downgrade():
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column('row_version')
