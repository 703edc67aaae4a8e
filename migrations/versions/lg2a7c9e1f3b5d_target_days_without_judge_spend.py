"""target_days without the judges' spend: the ledger (spend_days) holds every judge call,
by the judge model; target_days.judge_micros was written and never read

Revision ID: lg2a7c9e1f3b5d
Revises: wr1a2b3c4d5e
Create Date: 2026-12-07 10:10:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'lg2a7c9e1f3b5d'
down_revision = 'wr1a2b3c4d5e'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('target_days', schema=None) as batch_op:
        batch_op.drop_column('judge_micros')


def downgrade():
    with op.batch_alter_table('target_days', schema=None) as batch_op:
        batch_op.add_column(sa.Column('judge_micros', sa.BigInteger(), nullable=False,
                                      server_default='0'))
    # recounted from the outputs, as the rollups kept it (per target and day finished)
    postgres = op.get_bind().dialect.name == "postgresql"
    day = "date(timezone('UTC', finished_at))" if postgres else "substr(finished_at, 1, 10)"
    op.execute(f"""
        UPDATE target_days SET judge_micros = coalesce((
            SELECT sum(o.judge_cost_micros) FROM outputs o
            WHERE o.target_id = target_days.target_id AND o.finished_at IS NOT NULL
              AND o.status IN ('succeeded', 'failed')
              AND {day.replace('finished_at', 'o.finished_at')} = target_days.day), 0)""")
