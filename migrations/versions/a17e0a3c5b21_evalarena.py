"""EvalArena (issue 17): challenges as read-only global content with their dev and hidden
test traces, and each user's attempts and drafts.

Revision ID: a17e0a3c5b21
Revises: f0c4d2e8a913
Create Date: 2026-11-26 05:50:00.000000

"""
from alembic import op
import sqlalchemy as sa



# revision identifiers, used by Alembic.
revision = 'a17e0a3c5b21'
down_revision = 'f0c4d2e8a913'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'arena_challenges',
        sa.Column('id', sa.String(length=80), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('title', sa.String(length=200), nullable=False),
        sa.Column('description', sa.Text(), nullable=False),
        sa.Column('difficulty', sa.String(length=8), nullable=False),
        sa.Column('category', sa.String(length=16), nullable=False),
        sa.Column('start_mode', sa.String(length=8), nullable=False),
        sa.Column('pass_threshold', sa.Float(), nullable=False),
        sa.Column('context', sa.JSON(), nullable=False),
        sa.Column('texts', sa.JSON(), nullable=False),
        sa.Column('dev_count', sa.Integer(), nullable=False),
        sa.Column('test_count', sa.Integer(), nullable=False),
        sa.Column('content_hash', sa.String(length=64), nullable=False),
        sa.Column('retired_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_arena_challenges')),
    )
    op.create_table(
        'arena_traces',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('challenge_id', sa.String(length=80), nullable=False),
        sa.Column('split', sa.String(length=8), nullable=False),
        sa.Column('key', sa.String(length=80), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('messages', sa.JSON(), nullable=False),
        sa.Column('label', sa.String(length=8), nullable=False),
        sa.Column('violated_clause', sa.Integer(), nullable=True),
        sa.Column('severity', sa.String(length=8), nullable=True),
        sa.Column('cluster', sa.String(length=80), nullable=True),
        sa.Column('fail_index', sa.Integer(), nullable=True),
        sa.Column('hidden_fail_reason', sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(['challenge_id'], ['arena_challenges.id'],
                                name=op.f('fk_arena_traces_challenge_id_arena_challenges'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_arena_traces')),
    )
    op.create_index('ix_arena_traces_challenge_split', 'arena_traces',
                    ['challenge_id', 'split', 'position'], unique=False)
    op.create_table(
        'arena_attempts',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('challenge_id', sa.String(length=80), nullable=False),
        sa.Column('tab', sa.String(length=8), nullable=False),
        sa.Column('split', sa.String(length=8), nullable=False),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=True),
        sa.Column('judge_model', sa.String(length=200), nullable=True),
        sa.Column('summary', sa.JSON(), nullable=False),
        sa.Column('results', sa.JSON(), nullable=False),
        sa.Column('report', sa.JSON(), nullable=True),
        sa.Column('diff', sa.JSON(), nullable=False),
        sa.Column('critique', sa.JSON(), nullable=True),
        sa.Column('cost_micros', sa.BigInteger(), nullable=False),
        sa.Column('duration_ms', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['challenge_id'], ['arena_challenges.id'],
                                name=op.f('fk_arena_attempts_challenge_id_arena_challenges'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id'],
                                name=op.f('fk_arena_attempts_project_id_projects'),
                                ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'],
                                name=op.f('fk_arena_attempts_user_id_users'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_arena_attempts')),
    )
    op.create_index('ix_arena_attempts_lookup', 'arena_attempts',
                    ['user_id', 'challenge_id', 'tab', 'split', 'id'], unique=False)
    op.create_table(
        'arena_drafts',
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('challenge_id', sa.String(length=80), nullable=False),
        sa.Column('tab', sa.String(length=8), nullable=False),
        sa.Column('text', sa.Text(), nullable=True),
        sa.Column('hint_revealed_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['challenge_id'], ['arena_challenges.id'],
                                name=op.f('fk_arena_drafts_challenge_id_arena_challenges'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'],
                                name=op.f('fk_arena_drafts_user_id_users'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('user_id', 'challenge_id', 'tab', name=op.f('pk_arena_drafts')),
    )


def downgrade():
    op.drop_table('arena_drafts')
    op.drop_index('ix_arena_attempts_lookup', table_name='arena_attempts')
    op.drop_table('arena_attempts')
    op.drop_index('ix_arena_traces_challenge_split', table_name='arena_traces')
    op.drop_table('arena_traces')
    op.drop_table('arena_challenges')
