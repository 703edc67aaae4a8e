"""A row per budget hold made outside runs (generation, scorer trials, critiques, AI
assist, arena judging, experiment steps) with its lease: the reaper gives back the holds
of owners that died between holding and settling (issue 31 item 3).

Revision ID: cut31a1b2c3d4
Revises: r33a1b2c3d4e5
Create Date: 2026-12-07 23:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'cut31a1b2c3d4'
down_revision = 'r33a1b2c3d4e5'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'budget_holds',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('experiment_id', sa.Integer(), nullable=True),
        sa.Column('micros', sa.BigInteger(), nullable=False),
        sa.Column('what', sa.String(length=100), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id'],
                                name=op.f('fk_budget_holds_project_id_projects'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['experiment_id'], ['experiments.id'],
                                name=op.f('fk_budget_holds_experiment_id_experiments'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_budget_holds')),
    )
    op.create_index('ix_budget_holds_lease', 'budget_holds', ['lease_until'])


def downgrade():
    op.drop_index('ix_budget_holds_lease', table_name='budget_holds')
    op.drop_table('budget_holds')
