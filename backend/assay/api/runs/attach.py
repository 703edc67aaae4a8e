"""Scoring a finished run after the fact: add scorer versions (202, the scoring job scores
every recorded output they have not scored) and estimate what that may cost."""

from __future__ import annotations

from typing import Any

from assay.api.base import commit, project_access, runtime, session, user
from assay.api.runs.attach_schemas import AttachEstimateSchema, AttachScorersSchema
from assay.api.runs.blueprint import blp
from assay.api.runs.schemas import RunSchema
from assay.api.runs.views import run_view
from assay.core.projects.models import Role
from assay.core.runs import service as runs
from assay.core.scoring.attach import attach_scorers, estimate_attach
from assay.jobs.queues import enqueue_scoring


@blp.post("/<int:run_id>/scorers")
@blp.arguments(AttachScorersSchema)
@blp.response(202, RunSchema)
def add_scorers(data: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Pin more scorer versions on a finished run and score its recorded outputs with them
    in the background, within the run's and project's budgets; progress arrives on the
    run's event stream as run.scored. 409 RUN_NOT_FINISHED while the run is still going;
    422 naming each version that is unknown, archived, a pairwise judge or already pinned."""
    project, _ = project_access(project_id, Role.editor)
    run = runs.get_run(session(), project, run_id)
    attach_scorers(session(), user(), project, run, data["scorer_version_ids"])
    commit()
    enqueue_scoring(runtime(), run.id)
    return run_view(run)


@blp.post("/<int:run_id>/scorers/estimate")
@blp.arguments(AttachScorersSchema)
@blp.response(200, AttachEstimateSchema)
def estimate_scorers(data: dict[str, Any], project_id: int, run_id: int) -> Any:
    """What adding these scorer versions would cost in judge calls (a range in
    micro-dollars, counted on the run's real replies) and what the caps leave. The same
    checks as adding them; writes nothing."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    return estimate_attach(session(), project, run, data["scorer_version_ids"])
