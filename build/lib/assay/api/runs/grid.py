"""A run's results grid: a page of cases, each with its cells per target and their scores."""

from __future__ import annotations

from typing import Any

from assay.api.base import commit, project_access, session
from assay.api.runs.blueprint import blp
from assay.api.runs.grid_schemas import ResultsGridArgs, ResultsGridSchema
from assay.core.projects.models import Role
from assay.core.runs import grid
from assay.core.runs import service as runs


@blp.get("/<int:run_id>/grid")
@blp.arguments(ResultsGridArgs, location="query")
@blp.response(200, ResultsGridSchema)
def get_grid(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Rows are cases (dataset order unless sorted), columns the targets; each cell holds
    the outputs (a text preview, tokens, cost, latency, error class) and their scores. A row
    matches the cell filters when one of its visible cells matches them all. 422 for a
    target or scorer not of this run or project, a reversed score range, an offset past the
    last row."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    listed = args.pop("target_ids")
    targets = tuple(int(t) for t in listed.split(",")) if listed else ()
    descending = args.pop("order") == "desc"
    found = grid.grid(session(), project, run, grid.GridQuery(
        target_ids=targets, descending=descending, **args))
    commit()  # a count kept for the next page (runs/cache.py)
    return found
