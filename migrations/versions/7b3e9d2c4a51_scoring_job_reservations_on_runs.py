"""scoring job reservations on runs

Revision ID: 7b3e9d2c4a51
Revises: 5d2a7c9e1f30
Create Date: 2026-11-25 18:55:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '7b3e9d2c4a51'
down_revision = '5d2a7c9e1f30'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('scoring_reserved_micros', sa.BigInteger(),
                                      nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('scoring_lease_until', sa.DateTime(timezone=True),
                                      nullable=True))


def downgrade():
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_column('scoring_lease_until')
        batch_op.drop_column('scoring_reserved_micros')
