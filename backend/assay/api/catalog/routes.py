"""Read-only lists of a project's models and datasets (their editors come later)."""

from __future__ import annotations

from typing import Any

from assay.api.base import Blueprint, PageArgs, page_dict, page_of, project_access, session
from assay.api.catalog.schemas import DatasetSchema, ModelSchema
from assay.core.datasets import service as datasets
from assay.core.llm import service as llm
from assay.core.projects.models import Role

blp = Blueprint("catalog", __name__, url_prefix="/api/projects/<int:project_id>",
                description="Models and datasets")


@blp.get("/models")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(ModelSchema))
def list_models(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = llm.list_models(session(), project, args["page"], args["page_size"])
    return page_dict(page, [{**{c: getattr(m, c) for c in ModelSchema().fields
                                if c != "provider"},
                             "provider": m.credential.kind} for m in page.items])


@blp.get("/datasets")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(DatasetSchema))
def list_datasets(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = datasets.list_datasets(session(), project, args["page"], args["page_size"])
    return page_dict(page, [{"id": d.id, "name": d.name, "kind": d.kind, "case_count": count,
                             "version": number} for d, number, count in page.items])
