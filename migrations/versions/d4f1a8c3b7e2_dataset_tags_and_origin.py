"""Tags on a dataset itself, and where its cases came from (generation, import, by hand).

Existing datasets get no tags (server default '[]') and an unknown origin (null).

Revision ID: d4f1a8c3b7e2
Revises: a4c2e8f1d937
Create Date: 2026-11-25 23:30:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'd4f1a8c3b7e2'
down_revision = 'a4c2e8f1d937'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('tags', sa.JSON(), nullable=False,
                                      server_default=sa.text("'[]'")))
        batch_op.add_column(sa.Column('origin', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.drop_column('origin')
        batch_op.drop_column('tags')
