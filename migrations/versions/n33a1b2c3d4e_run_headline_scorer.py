"""A run's headline scorer, when a user pins one: the scorer whose score and pass rate the
run page and the run report lead with (issue 33 item 6). Null: Assay's default (the
composite of a rubric judge, else a scorer whose scores discriminate).

Revision ID: n33a1b2c3d4e
Revises: ef1a2b3c4d5e
Create Date: 2026-12-07 13:30:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'n33a1b2c3d4e'
down_revision = 'ef1a2b3c4d5e'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('headline_scorer_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key('fk_runs_headline_scorer_id_scorer_configs', 'scorer_configs',
                                    ['headline_scorer_id'], ['id'], ondelete='SET NULL')


def downgrade():
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_constraint('fk_runs_headline_scorer_id_scorer_configs', type_='foreignkey')
        batch_op.drop_column('headline_scorer_id')
