"""Import (preview, then all rows or none), export and coverage of a dataset. An import
takes the file in a JSON body (text or base64) or as multipart/form-data (api/files.py).
Import bodies may be up to 15 MB (a 10 MB file as base64); every other body keeps 1 MB."""

from __future__ import annotations

from typing import Any

from flask import request
from sqlalchemy.exc import IntegrityError

from assay.api.base import Blueprint, commit, project_access, session, user
from assay.api.datasets.routes import ONE, version_view
from assay.api.datasets.schemas import (
    CoverageSchema,
    ExportArgs,
    ImportFileSchema,
    ImportFormSchema,
    ImportSchema,
    ImportSourceSchema,
    PreviewSchema,
    VersionArgs,
    VersionSchema,
)
from assay.api.files import (
    body_doc,
    download,
    download_doc,
    file_errors,
    is_form,
    json_or_form,
)
from assay.api.slow_lane import slow_work
from assay.core.datasets import coverage, exporting, importing, service
from assay.core.errors import Invalid
from assay.core.projects.models import Role

blp = Blueprint("dataset_transfer", __name__,
                url_prefix="/api/projects/<int:project_id>/datasets",
                description="Dataset import, export and coverage")
IMPORT_BODY_BYTES = 15_000_000


@blp.before_request
def _larger_bodies() -> None:
    if request.endpoint in {f"{blp.name}.preview_import", f"{blp.name}.import_cases"}:
        request.max_content_length = IMPORT_BODY_BYTES


def _file(data: dict[str, Any]) -> tuple[str, str]:
    """(format, text) of the file, from the form's part or the JSON body."""
    if not is_form():
        return data["format"], importing.decode(data["content"], data["base64"])
    upload = data["file"]
    format = data.get("format") or importing.format_of(upload.filename or "")
    if format is None:
        raise Invalid("The file's format is unknown: send format=csv or format=jsonl", {
            "files": {"format": ["csv or jsonl; the file name does not end with .csv, "
                                 ".jsonl or .ndjson"]}})
    return format, importing.read_bytes(upload.read(importing.MAX_BYTES + 1))


@blp.post(ONE + "/import/preview")
@blp.doc(requestBody=body_doc(ImportSourceSchema, ImportFileSchema))
@blp.response(200, PreviewSchema)
@json_or_form(ImportSourceSchema, ImportFileSchema)
def preview_import(data: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """The detected columns and the first 10 rows; nothing is written."""
    project, _ = project_access(project_id, Role.editor)
    service.get_dataset(session(), project, dataset_id)
    with file_errors():
        return importing.preview(*_file(data))


@blp.post(ONE + "/import")
@blp.doc(requestBody=body_doc(ImportSchema, ImportFormSchema))
@blp.response(201, VersionSchema)
@json_or_form(ImportSchema, ImportFormSchema)
def import_cases(data: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """Every row is checked first: any bad row is a 422 listing each {row, field, reason},
    and nothing is written. Otherwise one new version appends all rows. A file Assay
    exported imports back to the same cases (CSV: map every column to its own name)."""
    project, _ = project_access(project_id, Role.editor)
    dataset = service.get_dataset(session(), project, dataset_id)
    with file_errors():
        format, text = _file(data)
        version = importing.import_cases(session(), user(), project, dataset, format, text,
                                         data.get("mapping"), data["note"])
    try:
        commit()
    except IntegrityError as error:
        session().rollback()
        raise service.version_conflict() from error
    return version_view(version)


@blp.get(ONE + "/export")
@blp.arguments(ExportArgs, location="query")
@blp.response(200)
@blp.doc(responses=download_doc("The file, streamed", *exporting.FORMATS.values()))
@slow_work
def export_cases(args: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """One version as a download (Content-Disposition names the file), streamed: CSV
    (text/csv; questions and cases datasets) or JSONL (application/x-ndjson), which import
    back to the same cases. CSV cells a spreadsheet would run as formulas start with an
    apostrophe, which the import takes off."""
    project, _ = project_access(project_id, Role.viewer)
    dataset = service.get_dataset(session(), project, dataset_id)
    version = service.get_version(session(), dataset, args["version"])
    format = args["format"]
    chunks = exporting.export(session(), dataset, version, format)
    return download(chunks, exporting.FORMATS[format],
                    exporting.filename(dataset, version, format))


@blp.get(ONE + "/coverage")
@blp.arguments(VersionArgs, location="query")
@blp.response(200, CoverageSchema)
def dataset_coverage(args: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """Cases by tag, input length bucket, difficulty and language."""
    project, _ = project_access(project_id, Role.viewer)
    dataset = service.get_dataset(session(), project, dataset_id)
    version = service.get_version(session(), dataset, args["version"])
    return coverage.coverage(session(), dataset, version)
