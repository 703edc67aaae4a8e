"""Read-only list of a project's datasets (their editor comes later). Models moved to
api/models."""

from __future__ import annotations

from typing import Any

from assay.api.base import Blueprint, PageArgs, page_dict, page_of, project_access, session
from assay.api.catalog.schemas import DatasetSchema
from assay.core.datasets import service as datasets
from assay.core.projects.models import Role

blp = Blueprint("catalog", __name__, url_prefix="/api/projects/<int:project_id>",
                description="Datasets")


@blp.get("/datasets")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(DatasetSchema))
def list_datasets(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = datasets.list_datasets(session(), project, args["page"], args["page_size"])
    return page_dict(page, [{"id": d.id, "name": d.name, "kind": d.kind, "case_count": count,
                             "version": number} for d, number, count in page.items])
