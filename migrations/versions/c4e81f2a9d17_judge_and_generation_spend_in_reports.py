"""judge and generation spend in the cost report

Revision ID: c4e81f2a9d17
Revises: 3c8f1a6d2e47
Create Date: 2026-11-25 23:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c4e81f2a9d17'
down_revision = '3c8f1a6d2e47'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('target_days', schema=None) as batch_op:
        batch_op.add_column(sa.Column('judge_micros', sa.BigInteger(), nullable=False,
                                      server_default='0'))
    op.create_table('spend_days',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('model_key', sa.Integer(), nullable=False),
    sa.Column('calls', sa.Integer(), nullable=False),
    sa.Column('spent_micros', sa.BigInteger(), nullable=False),
    sa.Column('tokens_in', sa.BigInteger(), nullable=False),
    sa.Column('tokens_out', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_spend_days_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('project_id', 'day', 'kind', 'model_key', name=op.f('pk_spend_days'))
    )
    _refill()


def _refill():
    """target_days recounted from the outputs with their judges' cost (rollups.rebuild, in
    SQL): judge-mode runs' questions were never counted in before."""
    postgres = op.get_bind().dialect.name == "postgresql"
    day = "date(timezone('UTC', finished_at))" if postgres else "substr(finished_at, 1, 10)"
    op.execute("DELETE FROM target_days")
    op.execute(f"""
        INSERT INTO target_days (target_id, day, outputs, succeeded, spent_micros, tokens_in,
                                 tokens_out, judge_micros)
        SELECT target_id, {day}, count(*),
               sum(CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END),
               coalesce(sum(cost_micros), 0), coalesce(sum(tokens_in), 0),
               coalesce(sum(tokens_out), 0), coalesce(sum(judge_cost_micros), 0)
        FROM outputs
        WHERE finished_at IS NOT NULL AND status IN ('succeeded', 'failed')
        GROUP BY target_id, {day}""")


def downgrade():
    op.drop_table('spend_days')
    with op.batch_alter_table('target_days', schema=None) as batch_op:
        batch_op.drop_column('judge_micros')
