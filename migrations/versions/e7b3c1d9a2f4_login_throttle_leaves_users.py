"""Sign-in failures and locks move to Redis, per (account, client address): the account-wide
columns that let one address lock a user out everywhere are dropped.

Revision ID: e7b3c1d9a2f4
Revises: d4f1a8c3b7e2
Create Date: 2026-11-26 02:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e7b3c1d9a2f4'
down_revision = 'd4f1a8c3b7e2'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('locked_until')
        batch_op.drop_column('failed_logins')


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('failed_logins', sa.Integer(), nullable=False,
                                      server_default=sa.text('0')))
        batch_op.add_column(sa.Column('locked_until', sa.DateTime(timezone=True),
                                      nullable=True))
