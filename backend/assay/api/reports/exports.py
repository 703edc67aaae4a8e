"""Exports of a run's results, streamed: CSV, JSON or JUnit XML, as a download."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields

from assay.api.base import Blueprint, project_access, session
from assay.api.files import download, download_doc
from assay.api.reports.schemas import ExportArgs, ScorerRefSchema
from assay.api.slow_lane import slow_work
from assay.core.projects.models import Role
from assay.core.reports import exports
from assay.core.runs import service as runs

blp = Blueprint("run_exports", __name__, url_prefix="/api/projects/<int:project_id>/runs",
                description="Exports of a run's results")


class ExportCellsSchema(Schema):
    total = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    skipped = fields.Integer(required=True, metadata={
        "description": "Never sent: the run was cancelled or stopped by its budget"})


class ExportRunSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    status = fields.String(required=True)
    dataset_version_id = fields.Integer(required=True)
    created_at = fields.String(required=True, metadata={"format": "date-time"})
    finished_at = fields.String(required=True, allow_none=True,
                                metadata={"format": "date-time"})
    cells = fields.Nested(ExportCellsSchema, required=True)


class ExportCaseSchema(Schema):
    id = fields.Integer(required=True)
    input = fields.Dict(required=True)
    expected = fields.Dict(required=True, allow_none=True)


class ExportTargetSchema(Schema):
    id = fields.Integer(required=True)
    label = fields.String(required=True)
    model_id = fields.Integer(required=True, allow_none=True)
    model = fields.String(required=True, allow_none=True)


class ExportResultSchema(Schema):
    source = fields.String(required=True, metadata={
        "description": "'' for rules, the judge model, or user:<id>"})
    version = fields.Integer(required=True)
    value = fields.Float(required=True, allow_none=True)
    passed = fields.Boolean(required=True, allow_none=True)
    rationale = fields.String(required=True)
    error = fields.String(required=True, allow_none=True)


class ExportScoreSchema(Schema):
    scorer_id = fields.Integer(required=True)
    scorer = fields.String(required=True)
    value = fields.Float(required=True, allow_none=True, metadata={
        "description": "Mean over its results"})
    passed = fields.Boolean(required=True, allow_none=True, metadata={
        "description": "Every verdict passed; null without a verdict"})
    results = fields.List(fields.Nested(ExportResultSchema), required=True)


class ExportOutputSchema(Schema):
    id = fields.Integer(required=True)
    case = fields.Nested(ExportCaseSchema, required=True)
    target = fields.Nested(ExportTargetSchema, required=True)
    repeat = fields.Integer(required=True)
    turn = fields.Integer(required=True)
    status = fields.String(required=True)
    text = fields.String(required=True, allow_none=True)
    error_class = fields.String(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)
    tokens_in = fields.Integer(required=True, allow_none=True)
    tokens_out = fields.Integer(required=True, allow_none=True)
    cost_micros = fields.Integer(required=True, allow_none=True)
    latency_ms = fields.Integer(required=True, allow_none=True)
    cached = fields.Boolean(required=True)
    finished_at = fields.String(required=True, allow_none=True,
                                metadata={"format": "date-time"})
    scores = fields.List(fields.Nested(ExportScoreSchema), required=True)


class RunExportSchema(Schema):
    """The JSON export."""

    run = fields.Nested(ExportRunSchema, required=True)
    scorers = fields.List(fields.Nested(ScorerRefSchema), required=True)
    outputs = fields.List(fields.Nested(ExportOutputSchema), required=True)


@blp.get("/<int:run_id>/export")
@blp.arguments(ExportArgs, location="query")
@blp.response(200)
@blp.doc(responses=download_doc(
    "The file, streamed", exports.FORMATS["csv"][0], exports.FORMATS["junit"][0],
    json_schema=RunExportSchema))
@slow_work
def export_run(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Every output of the run as a download (Content-Disposition names the file), streamed.
    csv: one row per output (case input and expected as JSON, target, model, status, text,
    error class, tokens, cost, latency, then a value and a passed column per scorer; cells
    a spreadsheet would run as a formula are quoted). json: the same, nested. junit: one
    testsuite per target, one testcase per case x repeat, failing when a scorer failed it
    (its rationale is the message), erring when the call failed."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    chunks = exports.export(session(), run, args["format"])
    return download(chunks, exports.FORMATS[args["format"]][0],
                    exports.filename(run, args["format"]))
