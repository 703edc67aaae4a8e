"""Documents: uploaded grounding sources (a PDF, or plain text or Markdown) whose text
grounded conversations are generated from. The text is extracted once, at upload; a PDF
is read with pypdf, and one without a text layer (a scan) is refused, not stored empty."""

from __future__ import annotations

import io
import logging
import posixpath
from typing import Any

from pypdf import PdfReader
from pypdf.errors import PyPdfError
from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.datasets.models import Document
from assay.core.errors import Invalid, NotFound
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project

log = logging.getLogger(__name__)
MAX_BYTES = 20 * 1024 * 1024
TEXT_TYPES = {".txt": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown"}
PDF = "application/pdf"
NAME_LIMIT = 255


def _refused(message: str) -> Invalid:
    return Invalid(message, {"files": {"file": [message]}})


def clean_name(filename: str | None) -> str:
    base = posixpath.basename((filename or "").replace("\\", "/")).strip()
    base = "".join(ch for ch in base if ch.isprintable())
    return base[:NAME_LIMIT] or "document"


def _pdf_text(data: bytes) -> tuple[str, int]:
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise _refused("The PDF is password-protected")
        pages = [page.extract_text() or "" for page in reader.pages]
    except Invalid:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError,
            RecursionError, OSError) as exc:
        log.info("unreadable PDF: %r", exc)
        raise _refused("Not a readable PDF") from exc
    return "\n\n".join(p.strip() for p in pages if p.strip()), len(pages)


def extract(filename: str, data: bytes) -> tuple[str, str, int | None]:
    """(mime type, text, pages) of an upload; Invalid when it cannot be used."""
    if not data:
        raise _refused("The file is empty")
    if len(data) > MAX_BYTES:
        raise _refused(f"The file is larger than {MAX_BYTES // (1024 * 1024)} MB")
    extension = posixpath.splitext(filename.lower())[1]
    if data.startswith(b"%PDF-") or extension == ".pdf":
        text, pages = _pdf_text(data)
        if not text.strip():
            raise _refused("no extractable text (scanned PDF?)")
        return PDF, text.replace("\x00", ""), pages
    if extension not in TEXT_TYPES:
        raise _refused("Upload a PDF, a .txt or a .md file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _refused("The text file is not UTF-8") from exc
    if "\x00" in text:
        raise _refused("The text file contains NUL characters (is it binary?)")
    if not text.strip():
        raise _refused("The file has no text")
    return TEXT_TYPES[extension], text, None


def create_document(session: Session, actor: User, project: Project, filename: str | None,
                    data: bytes) -> Document:
    name = clean_name(filename)
    mime, text, pages = extract(name, data)
    document = Document(project_id=project.id, name=name, mime=mime, size_bytes=len(data),
                        text=text, pages=pages, created_by=actor.id)
    session.add(document)
    session.flush()
    audit.record(session, actor, "document.uploaded", "document", document.id, project.id,
                 {"name": name, "mime": mime, "size_bytes": len(data), "pages": pages,
                  "characters": len(text)})
    return document


def list_documents(session: Session, project: Project, page: int, page_size: int) -> Page[Any]:
    stmt = select(Document).where(Document.project_id == project.id).order_by(Document.id.desc())
    return paginate(session, stmt, page, page_size)


def get_document(session: Session, project: Project, document_id: int) -> Document:
    document = session.get(Document, document_id)
    if document is None or document.project_id != project.id:
        raise NotFound("Document not found")
    return document


def delete_document(session: Session, actor: User, project: Project, document: Document) -> None:
    audit.record(session, actor, "document.deleted", "document", document.id, project.id,
                 {"name": document.name})
    session.delete(document)
