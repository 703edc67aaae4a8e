"""The chunks a project's documents are split into when uploaded: what a RAG run
retrieves from. Each keeps its place in the document (character offsets), so a case page
can show where a retrieved passage or a ground truth came from."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Text
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base


class DocumentChunk(Base):
    __tablename__ = "document_chunks"
    __table_args__ = (Index("ix_document_chunks_document", "document_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    position: Mapped[int]  # 0-based, in document order
    text: Mapped[str] = mapped_column(Text)
    start_char: Mapped[int]
    end_char: Mapped[int]
    tokens: Mapped[int]
    # the chunk's embedding when the project has an embedding model (None: BM25 only)
    embedding: Mapped[list[float] | None] = mapped_column(JSON)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
