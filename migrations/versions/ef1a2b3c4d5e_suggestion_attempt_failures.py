"""Why a refiner attempt was refused, one entry per attempt (attempt, kind, rule, message):
"no suggestion" names the guardrail or the format error of each try (issue 34 item 2).

Revision ID: ef1a2b3c4d5e
Revises: wr2a3b4c5d6e
Create Date: 2026-12-07 10:15:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'ef1a2b3c4d5e'
down_revision = 'wr2a3b4c5d6e'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('suggestions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attempt_failures', sa.JSON(), nullable=False,
                                      server_default=sa.text("'[]'")))


def downgrade():
    with op.batch_alter_table('suggestions', schema=None) as batch_op:
        batch_op.drop_column('attempt_failures')
