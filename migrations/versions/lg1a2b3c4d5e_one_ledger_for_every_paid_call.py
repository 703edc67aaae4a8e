"""one ledger for every paid call: spend_days keyed by the run a call served too, and the
judges of run outputs moved onto it (by run; their judge model is not known for the past)

Revision ID: lg1a2b3c4d5e
Revises: b5d0e3f7a912
Create Date: 2026-12-07 06:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'lg1a2b3c4d5e'
down_revision = 'b5d0e3f7a912'
branch_labels = None
depends_on = None

KEY = ['project_id', 'day', 'kind', 'model_key']


def upgrade():
    with op.batch_alter_table('spend_days', schema=None) as batch_op:
        batch_op.add_column(sa.Column('run_key', sa.Integer(), nullable=False,
                                      server_default='0'))
        batch_op.drop_constraint('pk_spend_days', type_='primary')
        batch_op.create_primary_key('pk_spend_days', [*KEY, 'run_key'])
    # what the judges of run outputs cost so far (target_days.judge_micros), onto the
    # ledger the cost report now reads them from
    postgres = op.get_bind().dialect.name == "postgresql"
    mode = "runs.settings->>'mode'" if postgres else "json_extract(runs.settings, '$.mode')"
    op.execute(f"""
        INSERT INTO spend_days (project_id, day, kind, model_key, run_key, calls, spent_micros,
                                tokens_in, tokens_out)
        SELECT runs.project_id, td.day,
               CASE WHEN {mode} = 'judge_questions' THEN 'judge_mode' ELSE 'judges' END,
               0, runs.id, 0, sum(td.judge_micros), 0, 0
        FROM target_days td JOIN run_targets rt ON rt.id = td.target_id
        JOIN runs ON runs.id = rt.run_id
        WHERE td.judge_micros <> 0
        GROUP BY runs.project_id, td.day, runs.id, {mode}""")


def downgrade():
    op.execute("DELETE FROM spend_days WHERE run_key <> 0")
    with op.batch_alter_table('spend_days', schema=None) as batch_op:
        batch_op.drop_constraint('pk_spend_days', type_='primary')
        batch_op.create_primary_key('pk_spend_days', KEY)
        batch_op.drop_column('run_key')
