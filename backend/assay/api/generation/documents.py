"""Documents of a project: upload a PDF or a text file (its text is extracted), list, read
and delete them. Grounded conversations are generated from them."""

from __future__ import annotations

from typing import Any

from flask import request

from assay.api.base import (
    Blueprint,
    PageArgs,
    commit,
    page_dict,
    page_of,
    project_access,
    session,
    user,
)
from assay.api.generation.schemas import (
    ChunkListSchema,
    DocumentDetailSchema,
    DocumentSchema,
    RetrieveArgs,
    RetrievedListSchema,
)
from assay.core.datasets.models import Document
from assay.core.errors import Invalid
from assay.core.generation import documents
from assay.core.projects.models import Role
from assay.core.retrieval import chunking
from assay.core.retrieval import service as retrieval

blp = Blueprint("documents", __name__, url_prefix="/api/projects/<int:project_id>/documents",
                description="Grounding documents (PDF or text) for generated conversations")
ONE = "/<int:document_id>"
FORM_SLACK = 64 * 1024  # multipart framing around the file
UPLOAD = {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["file"], "additionalProperties": False,
    "properties": {"file": {"type": "string", "format": "binary", "description":
                            "A PDF (with a text layer), a .txt or a .md file, up to 20 MB"},
    "chunk_size": {"type": "integer", "minimum": chunking.MIN_SIZE,
                   "maximum": chunking.MAX_SIZE, "default": chunking.DEFAULT_SIZE,
                   "description": "Tokens per chunk for retrieval, at most"},
    "chunk_overlap": {"type": "integer", "minimum": 0, "default": chunking.DEFAULT_OVERLAP,
                      "description": "Tokens neighbouring chunks share (at most half a "
                                     "chunk)"}}}}}}
SETTINGS = ("chunk_size", "chunk_overlap")


def view(d: Document, text: bool = False) -> dict[str, Any]:
    out = {"id": d.id, "name": d.name, "mime": d.mime, "size_bytes": d.size_bytes,
           "pages": d.pages, "characters": len(d.text),
           "chunks": len(retrieval.chunks_of(session(), [d.id])),
           "chunk_size": d.chunk_size, "chunk_overlap": d.chunk_overlap,
           "created_by": d.created_by, "created_at": d.created_at}
    return {**out, "text": d.text} if text else out


@blp.get("")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(DocumentSchema))
def list_documents(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = documents.list_documents(session(), project, args["page"], args["page_size"])
    return page_dict(page, [view(d) for d in page.items])


@blp.post("")
@blp.doc(requestBody=UPLOAD)
@blp.response(201, DocumentDetailSchema)
def upload(project_id: int) -> Any:
    """Upload a document; its text is extracted now. 422 for a PDF without a text layer."""
    project, _ = project_access(project_id, Role.editor)
    request.max_content_length = documents.MAX_BYTES + FORM_SLACK
    if request.mimetype != "multipart/form-data":
        raise Invalid("Send the file as multipart/form-data", {"files": {"file": [
            "Missing data for required field."]}})
    upload = request.files.get("file")
    extra = sorted(set(request.files) - {"file"}) + sorted(set(request.form) - set(SETTINGS))
    if upload is None:
        raise Invalid("Invalid input", {"files": {"file": ["Missing data for required field."]}})
    if extra:
        raise Invalid("Invalid input", {"files": {name: ["Unknown field."] for name in extra}})
    data = upload.read(documents.MAX_BYTES + 1)
    size, overlap = _setting("chunk_size", chunking.DEFAULT_SIZE), \
        _setting("chunk_overlap", chunking.DEFAULT_OVERLAP)
    errors = chunking.check_settings(size, overlap)
    if errors:
        raise Invalid("Invalid chunk settings", {"form": errors})
    document = documents.create_document(session(), user(), project, upload.filename, data)
    retrieval.chunk_document(session(), document, size, overlap)
    commit()
    return view(document, text=True)


def _setting(name: str, default: int) -> int:
    raw = request.form.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise Invalid("Invalid chunk settings", {"form": {name: ["Not a valid integer."]}}) \
            from exc


@blp.get(ONE + "/chunks")
@blp.response(200, ChunkListSchema)
def list_chunks(project_id: int, document_id: int) -> Any:
    """The document's chunks, in order: what a RAG run retrieves from."""
    project, _ = project_access(project_id, Role.viewer)
    document = documents.get_document(session(), project, document_id)
    return {"items": [{**retrieval.chunk_view(c), "start_char": c.start_char,
                       "end_char": c.end_char, "tokens": c.tokens}
                      for c in retrieval.chunks_of(session(), [document.id])]}


@blp.get(ONE + "/search")
@blp.arguments(RetrieveArgs, location="query")
@blp.response(200, RetrievedListSchema)
def search(args: dict[str, Any], project_id: int, document_id: int) -> Any:
    """The top-k chunks of the document for a query (BM25), as a RAG run would get them."""
    project, _ = project_access(project_id, Role.viewer)
    document = documents.get_document(session(), project, document_id)
    return {"items": retrieval.retrieve(session(), [document.id], args["query"],
                                        args["top_k"])}


@blp.get(ONE)
@blp.response(200, DocumentDetailSchema)
def get_document(project_id: int, document_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    return view(documents.get_document(session(), project, document_id), text=True)


@blp.delete(ONE)
@blp.response(204)
def delete_document(project_id: int, document_id: int) -> None:
    project, _ = project_access(project_id, Role.editor)
    document = documents.get_document(session(), project, document_id)
    documents.delete_document(session(), user(), project, document)
    commit()
