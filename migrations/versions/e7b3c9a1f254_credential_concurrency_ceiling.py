"""A credential's concurrency ceiling: calls in flight on the key at once, over every run,
shard and worker (issue 19 item 4). Existing credentials get none (null: no ceiling).

Revision ID: e7b3c9a1f254
Revises: e7b3c1d9a2f4
Create Date: 2026-11-26 03:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e7b3c9a1f254'
down_revision = 'e7b3c1d9a2f4'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('credentials', schema=None) as batch_op:
        batch_op.add_column(sa.Column('concurrency_ceiling', sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table('credentials', schema=None) as batch_op:
        batch_op.drop_column('concurrency_ceiling')
