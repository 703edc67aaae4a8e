"""Run caches: what the run page and the reports compute from a finished run's outputs and
scores, kept per run and stamped (core/runs/cache.py); `runs.scores_version` moves when a
writer outside the engine's batches changes the run's scores (issue 19 item 2). The index
the results grid walks a version's cases by is the next revision's.

Revision ID: a3c5e7f9b1d2
Revises: 61400432f4a2
Create Date: 2026-11-26 09:20:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a3c5e7f9b1d2'
down_revision = '61400432f4a2'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('scores_version', sa.Integer(), server_default='0',
                                      nullable=False))
    op.create_table(
        'run_caches',
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=200), nullable=False),
        sa.Column('stamp', sa.String(length=100), nullable=False),
        sa.Column('payload', sa.LargeBinary(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_run_caches_run_id_runs'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_id', 'key', name=op.f('pk_run_caches')))
    if op.get_bind().dialect.name == 'postgresql':  # read whole and often: not compressed
        op.execute('ALTER TABLE run_caches ALTER COLUMN payload SET STORAGE EXTERNAL')


def downgrade():
    op.drop_table('run_caches')
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_column('scores_version')
