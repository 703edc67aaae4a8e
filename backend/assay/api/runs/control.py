"""Run control: pause, resume, cancel, retry the failed cells (409 INVALID_TRANSITION when
the run's status does not allow it)."""

from __future__ import annotations

import logging
from typing import Any

import redis

from assay.api import preconditions
from assay.api.base import commit, project_access, runtime, session, user
from assay.api.runs.blueprint import blp
from assay.api.runs.schemas import RunBudgetSchema, RunHeadlineSchema, RunSchema
from assay.api.runs.views import run_view
from assay.core.projects.models import Role
from assay.core.reports.headline import pin_headline
from assay.core.runs import control
from assay.core.runs import service as runs
from assay.events.publish import STATUS
from assay.jobs import stops
from assay.jobs.queues import enqueue_run

log = logging.getLogger(__name__)
STOPS = frozenset({"pause", "cancel"})


def _act(project_id: int, run_id: int, action: str) -> dict[str, Any]:
    project, _ = project_access(project_id, Role.editor)
    run = runs.get_run(session(), project, run_id)
    control.ACTIONS[action](session(), user(), run)
    commit()
    rt = runtime()
    if action in STOPS:  # its shards abort the calls in flight
        stops.request(rt, stops.RUN, run.id)
    try:  # committed: a Redis hiccup must not turn it into a 500 (the reaper enqueues later)
        if action in control.STARTS_SHARDS:
            enqueue_run(rt, run.id)
        rt.publish(run.id, STATUS, control.status_payload(session(), run.id))
    except redis.RedisError:
        log.exception("run %s: %s committed, but Redis refused the follow-up", run.id, action)
    return run_view(run)


@blp.patch("/<int:run_id>")
@blp.arguments(RunBudgetSchema)
@blp.response(200, RunSchema)
@preconditions.write()
def set_run_budget(data: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Change a run's budget

    The cap (null: none) and its alert threshold; raise it, then resume a run that stopped
    with budget_exceeded. 422 when the cap is below what the run has spent and holds."""
    project, _ = project_access(project_id, Role.editor)
    run = runs.get_run(session(), project, run_id)
    preconditions.guard(run, lambda: run_view(run))
    control.set_budget(session(), user(), run, data["budget_micros"], data["alert_threshold"])
    commit()
    try:
        runtime().publish(run.id, STATUS, control.status_payload(session(), run.id))
    except redis.RedisError:
        log.exception("run %s: budget changed, but its event was not published", run.id)
    return preconditions.tagged(run_view(run), run)


@blp.put("/<int:run_id>/headline")
@blp.arguments(RunHeadlineSchema)
@blp.response(200, RunSchema)
@preconditions.write()
def pin_run_headline(data: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Pin the run's headline scorer

    The scorer whose score and pass rate the run page and report lead with (null: the
    default). 422 when it is not one of the run's pointwise scorers."""
    project, _ = project_access(project_id, Role.editor)
    run = runs.get_run(session(), project, run_id)
    preconditions.guard(run, lambda: run_view(run))
    pin_headline(session(), user(), run, data["scorer_id"])
    commit()
    return preconditions.tagged(run_view(run), run)


@blp.post("/<int:run_id>/pause")
@blp.response(200, RunSchema)
def pause_run(project_id: int, run_id: int) -> Any:
    """Pause a run

    pending|running -> paused: shards stop claiming and abort the calls in flight (never
    billed; those cells run again on resume), replies already in are recorded. 409
    INVALID_TRANSITION from any other status."""
    return _act(project_id, run_id, "pause")


@blp.post("/<int:run_id>/resume")
@blp.response(200, RunSchema)
def resume_run(project_id: int, run_id: int) -> Any:
    """Resume a run

    paused -> running; budget_exceeded -> running once the run's and the project's caps
    leave room again (409 BUDGET_SPENT otherwise), with the cells skipped for budget back
    to pending. Enqueues shard runners. 409 INVALID_TRANSITION from any other status."""
    return _act(project_id, run_id, "resume")


@blp.post("/<int:run_id>/cancel")
@blp.response(200, RunSchema)
def cancel_run(project_id: int, run_id: int) -> Any:
    """Cancel a run

    pending|running|paused -> cancelled: the calls in flight are aborted and skipped with
    the cells not started (never billed), replies already in are kept. 409
    INVALID_TRANSITION from any other status."""
    return _act(project_id, run_id, "cancel")


@blp.post("/<int:run_id>/retry-failed")
@blp.response(200, RunSchema)
def retry_failed_run(project_id: int, run_id: int) -> Any:
    """Retry the failed cells of a run

    partial|failed|budget_exceeded -> running, with the failed and skipped cells back to
    pending (409 BUDGET_SPENT when a cap leaves no room). Enqueues shard runners. 409
    INVALID_TRANSITION from any other status."""
    return _act(project_id, run_id, "retry-failed")
