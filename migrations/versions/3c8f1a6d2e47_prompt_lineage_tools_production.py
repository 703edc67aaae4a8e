"""prompt lineage, tool schemas and the production version

Revision ID: 3c8f1a6d2e47
Revises: 7b3e9d2c4a51
Create Date: 2026-11-25 23:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '3c8f1a6d2e47'
down_revision = '7b3e9d2c4a51'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('prompt_versions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('tools', sa.JSON(), nullable=False,
                                      server_default='[]'))
        batch_op.add_column(sa.Column('parent_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f('fk_prompt_versions_parent_id_prompt_versions'), 'prompt_versions',
            ['parent_id'], ['id'], ondelete='SET NULL')
    with op.batch_alter_table('prompts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('production_version_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f('fk_prompts_production_version_id_prompt_versions'), 'prompt_versions',
            ['production_version_id'], ['id'], ondelete='SET NULL')
    # Existing versions were each written after the one numbered before them; the newest
    # is what runs have been picking, so it starts as production.
    op.execute("""
        UPDATE prompt_versions SET parent_id = (
            SELECT p.id FROM prompt_versions p
            WHERE p.prompt_id = prompt_versions.prompt_id
              AND p.number = prompt_versions.number - 1)
    """)
    op.execute("""
        UPDATE prompts SET production_version_id = (
            SELECT v.id FROM prompt_versions v WHERE v.prompt_id = prompts.id
            ORDER BY v.number DESC LIMIT 1)
    """)


def downgrade():
    with op.batch_alter_table('prompts', schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f('fk_prompts_production_version_id_prompt_versions'),
            type_='foreignkey')
        batch_op.drop_column('production_version_id')
    with op.batch_alter_table('prompt_versions', schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f('fk_prompt_versions_parent_id_prompt_versions'), type_='foreignkey')
        batch_op.drop_column('parent_id')
        batch_op.drop_column('tools')
