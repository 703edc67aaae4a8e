"""Projects are soft-deleted: `deleted_at` hides them at once; the retention job purges them
after the grace period (issue 19 item 7).

Revision ID: f0c4d2e8a913
Revises: e7b3c9a1f254
Create Date: 2026-11-26 06:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'f0c4d2e8a913'
down_revision = 'e7b3c9a1f254'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.add_column(sa.Column('deleted_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index('ix_projects_deleted_at', ['deleted_at'], unique=False)


def downgrade():
    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.drop_index('ix_projects_deleted_at')
        batch_op.drop_column('deleted_at')
