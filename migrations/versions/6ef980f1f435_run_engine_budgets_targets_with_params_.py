"""run engine: budgets, targets with params and prompts, turns, skipped cells

Revision ID: 6ef980f1f435
Revises: 89e1e5d7cc30
Create Date: 2026-11-21 23:17:51.992465

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '6ef980f1f435'
down_revision = '89e1e5d7cc30'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('prompts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('archived_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_prompts_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_prompts')),
    sa.UniqueConstraint('project_id', 'name', name=op.f('uq_prompts_project_id'))
    )
    with op.batch_alter_table('prompts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_prompts_project_id'), ['project_id'], unique=False)

    op.create_table('prompt_versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('prompt_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('template', sa.Text(), nullable=False),
    sa.Column('system', sa.Text(), nullable=True),
    sa.Column('few_shots', sa.JSON(), nullable=False),
    sa.Column('variables', sa.JSON(), nullable=False),
    sa.Column('note', sa.String(length=500), nullable=True),
    sa.Column('created_by', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by'], ['users.id'], name=op.f('fk_prompt_versions_created_by_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['prompt_id'], ['prompts.id'], name=op.f('fk_prompt_versions_prompt_id_prompts'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_prompt_versions')),
    sa.UniqueConstraint('prompt_id', 'number', name=op.f('uq_prompt_versions_prompt_id'))
    )
    with op.batch_alter_table('outputs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('turn', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('reserved_micros', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.drop_constraint(batch_op.f('uq_outputs_cell'), type_='unique')
        batch_op.create_unique_constraint('uq_outputs_cell', ['run_id', 'case_id', 'target_id', 'repeat', 'turn'])
        batch_op.create_index('ix_outputs_target', ['target_id', 'status'], unique=False)

    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.add_column(sa.Column('budget_micros', sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column('reserved_micros', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('spent_micros', sa.BigInteger(), nullable=False, server_default='0'))

    with op.batch_alter_table('run_targets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('prompt_version_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('params', sa.JSON(), nullable=False, server_default=sa.text("'{}'")))
        batch_op.add_column(sa.Column('label', sa.String(length=300), nullable=False, server_default=''))
        batch_op.add_column(sa.Column('total', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('succeeded', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('failed', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('skipped', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('spent_micros', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('tokens_in', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('tokens_out', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.alter_column('model_id',
               existing_type=sa.INTEGER(),
               nullable=True)
        batch_op.create_foreign_key(batch_op.f('fk_run_targets_prompt_version_id_prompt_versions'), 'prompt_versions', ['prompt_version_id'], ['id'])

    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('skipped', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('budget_micros', sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column('alert_threshold', sa.Double(), nullable=False, server_default='0.8'))
        batch_op.add_column(sa.Column('alerted_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('reserved_micros', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('spent_micros', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('tokens_in', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('tokens_out', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('error', sa.Text(), nullable=True))



def downgrade():
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_column('error')
        batch_op.drop_column('tokens_out')
        batch_op.drop_column('tokens_in')
        batch_op.drop_column('spent_micros')
        batch_op.drop_column('reserved_micros')
        batch_op.drop_column('alerted_at')
        batch_op.drop_column('alert_threshold')
        batch_op.drop_column('budget_micros')
        batch_op.drop_column('skipped')

    with op.batch_alter_table('run_targets', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_run_targets_prompt_version_id_prompt_versions'), type_='foreignkey')
        batch_op.alter_column('model_id',
               existing_type=sa.INTEGER(),
               nullable=False)
        batch_op.drop_column('tokens_out')
        batch_op.drop_column('tokens_in')
        batch_op.drop_column('spent_micros')
        batch_op.drop_column('skipped')
        batch_op.drop_column('failed')
        batch_op.drop_column('succeeded')
        batch_op.drop_column('total')
        batch_op.drop_column('label')
        batch_op.drop_column('params')
        batch_op.drop_column('prompt_version_id')

    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.drop_column('spent_micros')
        batch_op.drop_column('reserved_micros')
        batch_op.drop_column('budget_micros')

    with op.batch_alter_table('outputs', schema=None) as batch_op:
        batch_op.drop_index('ix_outputs_target')
        batch_op.drop_constraint('uq_outputs_cell', type_='unique')
        batch_op.create_unique_constraint(batch_op.f('uq_outputs_cell'), ['run_id', 'case_id', 'target_id', 'repeat'])
        batch_op.drop_column('reserved_micros')
        batch_op.drop_column('turn')

    op.drop_table('prompt_versions')
    with op.batch_alter_table('prompts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_prompts_project_id'))

    op.drop_table('prompts')
