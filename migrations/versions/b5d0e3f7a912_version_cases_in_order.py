"""A version's cases in order: (version_id, position, case_id), for the unfiltered results
grid's page of rows and the case numbers (issue 19 item 1: fast reads at 1M outputs).

Revision ID: b5d0e3f7a912
Revises: a3c5e7f9b1d2
Create Date: 2026-11-26 09:10:00.000000

"""
from alembic import op


# revision identifiers, used by Alembic.
revision = 'b5d0e3f7a912'
down_revision = 'a3c5e7f9b1d2'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('version_cases', schema=None) as batch_op:
        batch_op.create_index('ix_version_cases_order', ['version_id', 'position', 'case_id'],
                              unique=False)


def downgrade():
    with op.batch_alter_table('version_cases', schema=None) as batch_op:
        batch_op.drop_index('ix_version_cases_order')
