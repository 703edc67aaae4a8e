"""A run that answers from documents: per cell, the question (the case's question, or the
turn's user message) retrieves the top-k chunks of the chosen documents, and the context
template, holding {{context}} and {{question}}, replaces that user message. The chunks a
cell was given are stored with its output (Output.retrieved) for the grid, the case page
and the scorers, which judge groundedness against them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import Document
from assay.core.errors import Invalid
from assay.core.prompts.service import parse_variables, render
from assay.core.retrieval import service as retrieval
from assay.core.retrieval.context import context_text
from assay.core.retrieval.models import DocumentChunk

DEFAULT_TOP_K = 4
DEFAULT_TEMPLATE = (
    "Answer the question using only the context below. If the context does not hold the "
    "answer, say so.\n\nContext:\n{{context}}\n\nQuestion: {{question}}")
MAX_TEMPLATE = 8000


def check(session: Session, project_id: int, rag: Mapping[str, Any]) -> dict[str, Any]:
    """The run's `rag` setting, completed with defaults; Invalid naming what is wrong."""
    ids = list(dict.fromkeys(int(i) for i in rag.get("document_ids") or []))
    template = rag.get("template") or DEFAULT_TEMPLATE
    top_k = int(rag.get("top_k") or DEFAULT_TOP_K)
    errors: dict[str, list[str]] = {}
    if not ids:
        errors["document_ids"] = ["Choose at least one document"]
    found = dict(session.execute(
        select(Document.id, func.count(DocumentChunk.id))
        .outerjoin(DocumentChunk, DocumentChunk.document_id == Document.id)
        .where(Document.project_id == project_id, Document.id.in_(ids))
        .group_by(Document.id)).all()) if ids else {}
    for document_id in ids:
        if document_id not in found:
            errors.setdefault("document_ids", []).append(
                f"No document {document_id} in this project")
        elif not found[document_id]:
            errors.setdefault("document_ids", []).append(
                f"Document {document_id} has no chunks (upload it again to split it)")
    missing = [name for name in ("context", "question")
               if name not in parse_variables(template)]
    if missing:
        errors["template"] = [f"The template must hold {{{{{name}}}}}" for name in missing]
    if not 1 <= top_k <= retrieval.MAX_TOP_K:
        errors["top_k"] = [f"Between 1 and {retrieval.MAX_TOP_K}"]
    if errors:
        raise Invalid("Invalid 'Answer from documents' settings", {"json": {"rag": errors}})
    return {"document_ids": ids, "top_k": top_k, "template": template}


def _question_index(messages: Sequence[Mapping[str, Any]]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            return index
    return None


def augment(session: Session, rag: Mapping[str, Any],
            messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages with the last user message rendered through the template with its
    retrieved context, the chunks retrieved)."""
    index = _question_index(messages)
    if index is None:
        return messages, []
    question = messages[index].get("content")
    question = question if isinstance(question, str) else str(question)
    chunks = retrieval.retrieve(session, rag["document_ids"], question, int(rag["top_k"]))
    prompt = render(rag["template"], {"context": context_text(chunks), "question": question})
    out = [dict(m) for m in messages]
    out[index] = {**out[index], "content": prompt}
    return out, chunks


def grounding(retrieved: Sequence[Mapping[str, Any]] | None) -> str | None:
    """What a RAG cell's answer is judged against: the context it was given."""
    return context_text(retrieved) if retrieved else None
