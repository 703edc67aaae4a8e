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
from assay.api.generation.schemas import DocumentDetailSchema, DocumentSchema
from assay.core.datasets.models import Document
from assay.core.errors import Invalid
from assay.core.generation import documents
from assay.core.projects.models import Role

blp = Blueprint("documents", __name__, url_prefix="/api/projects/<int:project_id>/documents",
                description="Grounding documents (PDF or text) for generated conversations")
ONE = "/<int:document_id>"
FORM_SLACK = 64 * 1024  # multipart framing around the file
UPLOAD = {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["file"], "additionalProperties": False,
    "properties": {"file": {"type": "string", "format": "binary", "description":
                            "A PDF (with a text layer), a .txt or a .md file, up to 20 MB"}}}}}}


def view(d: Document, text: bool = False) -> dict[str, Any]:
    out = {"id": d.id, "name": d.name, "mime": d.mime, "size_bytes": d.size_bytes,
           "pages": d.pages, "characters": len(d.text), "created_by": d.created_by,
           "created_at": d.created_at}
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
    extra = sorted(set(request.files) - {"file"}) + sorted(request.form)
    if upload is None:
        raise Invalid("Invalid input", {"files": {"file": ["Missing data for required field."]}})
    if extra:
        raise Invalid("Invalid input", {"files": {name: ["Unknown field."] for name in extra}})
    data = upload.read(documents.MAX_BYTES + 1)
    document = documents.create_document(session(), user(), project, upload.filename, data)
    commit()
    return view(document, text=True)


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
