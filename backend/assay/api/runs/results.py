"""A run's progress (polling fallback of the event stream) and results: outputs, one output
in full, the summary per target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.api.base import commit, page_dict, page_of, project_access, session
from assay.api.runs.blueprint import blp
from assay.api.runs.results_schemas import (
    OutputDetailSchema,
    OutputListArgs,
    OutputSchema,
    ProgressSchema,
    RunSummarySchema,
)
from assay.core.errors import NotFound
from assay.core.projects.models import Role
from assay.core.runs import progress, results
from assay.core.runs import service as runs
from assay.core.runs.case_numbers import case_numbers
from assay.core.runs.models import Output
from assay.core.runs.output_detail import output_detail

_OUTPUT_COLUMNS = [name for name in OutputSchema().fields
                   if name not in {"model_id", "label", "error", "case_number"}]


def _output(output: Output, target: Any, numbers: Mapping[int, int | None]) -> dict[str, Any]:
    """`target`: its model_id and label (a RunTarget, or a row of the two)."""
    return {**{name: getattr(output, name) for name in _OUTPUT_COLUMNS},
            "model_id": target.model_id, "label": target.label, "error": output.error_message,
            "case_number": numbers.get(output.case_id)}


@blp.get("/<int:run_id>/progress")
@blp.response(200, ProgressSchema)
def get_progress(project_id: int, run_id: int) -> Any:
    """The same payload as the run's events: poll it when Server-Sent Events are not
    available."""
    project, _ = project_access(project_id, Role.viewer)
    return progress.snapshot(session(), runs.get_run(session(), project, run_id).id)


@blp.get("/<int:run_id>/outputs")
@blp.arguments(OutputListArgs, location="query")
@blp.response(200, page_of(OutputSchema, estimated=True))
def list_outputs(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Ordered by case, target, repeat and turn; filter by target, status, error class.
    `total` is exact unless `total_exact` is false: past 10,000 matching rows, a filter the
    run's counters do not keep (pending, running, an error class) is estimated."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    page = results.list_outputs(session(), run, args["page"], args["page_size"],
                                args["target_id"], args["status"], args["error_class"])
    numbers = case_numbers(session(), run.dataset_version_id,
                           (output.case_id for output, _ in page.items))
    return page_dict(page, [_output(output, target, numbers)
                            for output, target in page.items])


@blp.get("/<int:run_id>/outputs/<int:output_id>")
@blp.response(200, OutputDetailSchema)
def get_output(project_id: int, run_id: int, output_id: int) -> Any:
    """One output with the raw request and response, its case's input and expected, and
    its scores (by scorer name, version and source)."""
    project, _ = project_access(project_id, Role.viewer)
    found = output_detail(session(), project.id, run_id, output_id)
    if found is None:
        runs.get_run(session(), project, run_id)  # the run's own 404 when it is the one missing
        raise NotFound("Output not found")
    return found


@blp.get("/<int:run_id>/summary")
@blp.response(200, RunSummarySchema)
def get_summary(project_id: int, run_id: int) -> Any:
    """Per target: cells by status, success rate, cost, tokens, cached cells, latency and
    time-to-first-token p50/p95 (nearest rank), errors by class."""
    project, _ = project_access(project_id, Role.viewer)
    found = results.summary(session(), runs.get_run(session(), project, run_id))
    commit()  # what a stopped run's summary keeps (runs/cache.py)
    return found
