"""judge costs on outputs and runs

Revision ID: 5d2a7c9e1f30
Revises: 99ec9ce09383
Create Date: 2026-11-25 17:45:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '5d2a7c9e1f30'
down_revision = '99ec9ce09383'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('outputs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('judge_cost_micros', sa.BigInteger(), nullable=True))
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('judge_spent_micros', sa.BigInteger(), nullable=False,
                                      server_default='0'))


def downgrade():
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_column('judge_spent_micros')
    with op.batch_alter_table('outputs', schema=None) as batch_op:
        batch_op.drop_column('judge_cost_micros')
