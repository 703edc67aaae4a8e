"""Chunking documents on upload and retrieving chunks for a question."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import Document
from assay.core.errors import Invalid
from assay.core.retrieval import chunking, index
from assay.core.retrieval.models import DocumentChunk

MAX_TOP_K = 20


def chunk_document(session: Session, document: Document, size: int, overlap: int) -> int:
    """(Re)split the document into chunks; returns how many. The caller commits."""
    errors = chunking.check_settings(size, overlap)
    if errors:
        raise Invalid("Invalid chunk settings", {"form": errors})
    session.execute(delete(DocumentChunk).where(DocumentChunk.document_id == document.id))
    pieces = chunking.split(document.text, size, overlap)
    session.add_all(DocumentChunk(document_id=document.id, position=p.position, text=p.text,
                                  start_char=p.start, end_char=p.end, tokens=p.tokens,
                                  meta={}) for p in pieces)
    document.chunk_size, document.chunk_overlap = size, overlap
    session.flush()
    return len(pieces)


def chunks_of(session: Session, document_ids: Sequence[int]) -> list[DocumentChunk]:
    """The chunks of these documents, in document then position order."""
    if not document_ids:
        return []
    return list(session.scalars(select(DocumentChunk)
                                .where(DocumentChunk.document_id.in_(list(document_ids)))
                                .order_by(DocumentChunk.document_id, DocumentChunk.position)))


def chunk_view(chunk: DocumentChunk, score: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"chunk_id": chunk.id, "document_id": chunk.document_id,
                           "position": chunk.position, "text": chunk.text}
    if score is not None:
        out["score"] = round(score, 4)
    return out


def retrieve(session: Session, document_ids: Sequence[int], query: str,
             k: int) -> list[dict[str, Any]]:
    """The top-k chunks of the documents for `query` by BM25, best first, each with its
    score."""
    chunks = chunks_of(session, document_ids)
    if not chunks:
        return []
    bm25 = index.bm25_for(tuple(c.id for c in chunks), [c.text for c in chunks])
    return [chunk_view(chunks[hit.index], hit.score) for hit in bm25.search(query, k)]


def source_chunks(session: Session, document_id: int, text: str,
                  k: int = 2) -> list[int]:
    """The chunks of a document a generated ground truth was drawn from: those that rank
    best for the ground truth itself (it quotes or closely paraphrases them)."""
    return [hit["chunk_id"] for hit in retrieve(session, [document_id], text, k)]
