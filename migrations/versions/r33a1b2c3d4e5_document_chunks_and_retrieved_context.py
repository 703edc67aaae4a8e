"""Documents are split into chunks on upload (chunk size and overlap kept on the
document) for retrieval; an output of a RAG run keeps the chunks it was given.

Revision ID: r33a1b2c3d4e5
Revises: n33a1b2c3d4e
Create Date: 2026-12-07 13:30:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'r33a1b2c3d4e5'
down_revision = 'n33a1b2c3d4e'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'document_chunks',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('document_id', sa.Integer(), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('start_char', sa.Integer(), nullable=False),
        sa.Column('end_char', sa.Integer(), nullable=False),
        sa.Column('tokens', sa.Integer(), nullable=False),
        sa.Column('embedding', sa.JSON(), nullable=True),
        sa.Column('meta', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['document_id'], ['documents.id'],
                                name=op.f('fk_document_chunks_document_id_documents'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_document_chunks')),
    )
    op.create_index('ix_document_chunks_document', 'document_chunks',
                    ['document_id', 'position'])
    op.add_column('documents', sa.Column('chunk_size', sa.Integer(), nullable=True))
    op.add_column('documents', sa.Column('chunk_overlap', sa.Integer(), nullable=True))
    op.add_column('outputs', sa.Column('retrieved', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('outputs', schema=None) as batch_op:
        batch_op.drop_column('retrieved')
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_column('chunk_overlap')
        batch_op.drop_column('chunk_size')
    op.drop_index('ix_document_chunks_document', table_name='document_chunks')
    op.drop_table('document_chunks')
