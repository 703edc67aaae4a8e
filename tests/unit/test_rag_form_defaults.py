"""The New run form's "Answer from documents" shows the server's own default template and
limits (frontend/src/features/runs/rag/context.ts keeps a copy, since the SPA reads no
server defaults): a change on either side without the other fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from assay.api.runs.schemas import RagSettingsSchema
from assay.core.retrieval import rag_run

CONTEXT_TS = Path(__file__).resolve().parents[2] / "frontend/src/features/runs/rag/context.ts"


def _constant(name: str) -> str:
    found = re.search(rf"export const {name} =\s*(.+?);\n", CONTEXT_TS.read_text(), re.S)
    assert found, f"{name} is not in {CONTEXT_TS.name}"
    return found.group(1).strip()


def _range(field: str) -> tuple[int, int]:
    for check in RagSettingsSchema().fields[field].validators:
        if hasattr(check, "min") and hasattr(check, "max"):
            return check.min, check.max
    raise AssertionError(f"rag.{field} has no range")


def test_the_forms_default_template_and_limits_are_the_servers() -> None:
    template = _constant("DEFAULT_RAG_TEMPLATE")
    assert json.loads(template.replace("'", '"')) == rag_run.DEFAULT_TEMPLATE
    assert int(_constant("RAG_TOP_K_DEFAULT")) == rag_run.DEFAULT_TOP_K
    assert int(_constant("RAG_TOP_K_MAX")) == _range("top_k")[1]
    assert int(_constant("RAG_DOCUMENTS_MAX")) == _range("document_ids")[1]
    assert int(_constant("RAG_TEMPLATE_MAX")) == rag_run.MAX_TEMPLATE == _range("template")[1]
