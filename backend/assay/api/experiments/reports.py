"""An experiment's final report (edison FR-IL-002) and its exports, and the import of a
bundle into a new draft."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from flask import Response, request

from assay.api.base import Blueprint, commit, project_access, session, user
from assay.api.experiments.routes import detail
from assay.api.experiments.schemas import (
    BundleFormSchema,
    BundleJsonSchema,
    ExperimentDetailSchema,
    ExportArgs,
    ReportSchema,
)
from assay.api.files import (
    attachment,
    body_doc,
    download,
    download_doc,
    file_errors,
    is_form,
    json_or_form,
)
from assay.api.slow_lane import slow_work
from assay.core.errors import Invalid
from assay.core.experiments import bundle, exports, report, service
from assay.core.projects.models import Role

blp = Blueprint("experiment_reports", __name__,
                url_prefix="/api/projects/<int:project_id>/experiments",
                description="Final reports, exports and bundles of experiments")
ONE = "/<int:experiment_id>"
TYPES = {"pdf": "application/pdf", "md": "text/markdown; charset=utf-8",
         "csv": "text/csv; charset=utf-8", "prompt-txt": "text/plain; charset=utf-8",
         "prompt-md": "text/markdown; charset=utf-8", "bundle": "application/zip"}
BODY_BYTES = 15_000_000  # the base64 of a bundle of bundle.MAX_BYTES, and a margin
NAMES = {"pdf": "report.pdf", "md": "report.md", "csv": "results.csv",
         "prompt-txt": "best-prompt.txt", "prompt-md": "best-prompt.md",
         "bundle": "bundle.zip"}


@blp.before_request
def _larger_bodies() -> None:
    if request.endpoint == f"{blp.name}.import_experiment":
        request.max_content_length = BODY_BYTES


@blp.get(ONE + "/report")
@blp.response(200, ReportSchema)
def get_report(project_id: int, experiment_id: int) -> Any:
    """Summary, best version (held-out), first vs last with the paired verdict, cost by
    phase, tokens, recommended model, weak criteria and next steps."""
    project, _ = project_access(project_id, Role.viewer)
    return report.build(session(), service.get(session(), project, experiment_id))


@blp.get(ONE + "/report/export")
@blp.arguments(ExportArgs, location="query")
@blp.response(200)
@blp.doc(responses=download_doc("The file", *TYPES.values()))
@slow_work
def export_report(args: dict[str, Any], project_id: int, experiment_id: int) -> Any:
    """pdf, md (the report), csv (every score), prompt-txt / prompt-md (the best prompt),
    bundle (zip that imports back with POST .../experiments/import)."""
    project, _ = project_access(project_id, Role.viewer)
    experiment = service.get(session(), project, experiment_id)
    fmt = args["format"]
    name = f"experiment-{experiment.id}-{NAMES[fmt]}"
    if fmt == "csv":
        return download(exports.results_csv(session(), experiment), TYPES[fmt], name)
    found = report.build(session(), experiment)
    body: bytes | str
    if fmt == "pdf":
        body = exports.pdf(found)
    elif fmt == "bundle":
        body = bundle.build(session(), experiment, found)
    elif fmt == "md":
        body = exports.markdown(found)
    else:
        body = exports.best_prompt(found, fmt.removeprefix("prompt-"))
    return Response(body, content_type=TYPES[fmt], headers={
        "Content-Disposition": attachment(name)})


@blp.post("/import")
@blp.doc(requestBody=body_doc(BundleJsonSchema, BundleFormSchema))
@blp.response(201, ExperimentDetailSchema)
@json_or_form(BundleJsonSchema, BundleFormSchema)
def import_experiment(data: dict[str, Any], project_id: int) -> Any:
    """A new draft from a bundle: its cases become a dataset; models unknown in this
    project are dropped from the configuration. 422 VALIDATION_ERROR for a file that is
    not a bundle."""
    project, _ = project_access(project_id, Role.editor)
    if is_form():
        raw = data["file"].read(bundle.MAX_BYTES + 1)
    else:
        try:
            raw = base64.b64decode(data["content"], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise Invalid("content is not base64", {"json": {"content": [
                "Not valid base64"]}}) from exc
    with file_errors():
        experiment = bundle.import_bundle(session(), user(), project, raw)
    commit()
    return detail(experiment)
