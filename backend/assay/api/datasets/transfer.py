"""Import (preview, then all rows or none), export and coverage of a dataset. Import bodies
may be up to 15 MB (a 10 MB file as base64); every other body keeps the 1 MB limit."""

from __future__ import annotations

from typing import Any

from flask import request
from sqlalchemy.exc import IntegrityError

from assay.api.base import Blueprint, commit, project_access, session, user
from assay.api.datasets.routes import ONE, version_view
from assay.api.datasets.schemas import (
    CoverageSchema,
    ExportArgs,
    ExportSchema,
    ImportSchema,
    ImportSourceSchema,
    PreviewSchema,
    VersionArgs,
    VersionSchema,
)
from assay.core.datasets import coverage, exporting, importing, service
from assay.core.projects.models import Role

blp = Blueprint("dataset_transfer", __name__,
                url_prefix="/api/projects/<int:project_id>/datasets",
                description="Dataset import, export and coverage")
IMPORT_BODY_BYTES = 15_000_000


@blp.before_request
def _larger_bodies() -> None:
    if request.endpoint in {f"{blp.name}.preview_import", f"{blp.name}.import_cases"}:
        request.max_content_length = IMPORT_BODY_BYTES


@blp.post(ONE + "/import/preview")
@blp.arguments(ImportSourceSchema)
@blp.response(200, PreviewSchema)
def preview_import(data: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """The detected columns and the first 10 rows; nothing is written."""
    project, _ = project_access(project_id, Role.editor)
    service.get_dataset(session(), project, dataset_id)
    return importing.preview(data["format"], data["content"], data["base64"])


@blp.post(ONE + "/import")
@blp.arguments(ImportSchema)
@blp.response(201, VersionSchema)
def import_cases(data: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """Every row is checked first: any bad row is a 422 listing each {row, field, reason},
    and nothing is written. Otherwise one new version appends all rows."""
    project, _ = project_access(project_id, Role.editor)
    dataset = service.get_dataset(session(), project, dataset_id)
    version = importing.import_cases(session(), user(), project, dataset, data["format"],
                                     data["content"], data["base64"], data.get("mapping"),
                                     data["note"])
    try:
        commit()
    except IntegrityError as error:
        session().rollback()
        raise service.version_conflict() from error
    return version_view(version)


@blp.get(ONE + "/export")
@blp.arguments(ExportArgs, location="query")
@blp.response(200, ExportSchema)
def export_cases(args: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """One version as CSV or JSONL text that imports back unchanged."""
    project, _ = project_access(project_id, Role.viewer)
    dataset = service.get_dataset(session(), project, dataset_id)
    version = service.get_version(session(), dataset, args["version"])
    return exporting.export(session(), dataset, version, args["format"])


@blp.get(ONE + "/coverage")
@blp.arguments(VersionArgs, location="query")
@blp.response(200, CoverageSchema)
def dataset_coverage(args: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """Cases by tag, input length bucket, difficulty and language."""
    project, _ = project_access(project_id, Role.viewer)
    dataset = service.get_dataset(session(), project, dataset_id)
    version = service.get_version(session(), dataset, args["version"])
    return coverage.coverage(session(), dataset, version)
