"""Runs: start (202), list, read, and the live progress stream (SSE)."""

from __future__ import annotations

from typing import Any

from flask import Response, request

from assay.api.base import (
    commit,
    event_stream,
    page_dict,
    page_of,
    project_access,
    runtime,
    session,
    sse_response,
    user,
)
from assay.api.runs.blueprint import blp
from assay.api.runs.schemas import (
    RunCreateSchema,
    RunEstimateResultSchema,
    RunListArgs,
    RunSchema,
)
from assay.api.runs.views import run_view, run_views
from assay.core.datasets.service import ensure_demo_dataset
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.models import Role
from assay.core.runs import progress
from assay.core.runs import service as runs
from assay.core.runs.estimate import estimate_run
from assay.core.runs.models import TERMINAL, Run, RunStatus
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.apply import has_scorers
from assay.events.stream import sse, valid_last_id
from assay.extensions import db
from assay.jobs.queues import enqueue_run, enqueue_scoring
from assay.seeds import demo_cases

DEMO_CONCURRENCY = 4  # small on purpose: the demo's progress visibly moves



def _start(run: Run) -> dict[str, Any]:
    commit()
    if RunStatus(run.status) not in TERMINAL:  # a trace run is done when planned
        enqueue_run(runtime(), run.id)
    elif has_scorers(session(), run.id):  # its recorded outputs are scored in the background
        enqueue_scoring(runtime(), run.id)
    return run_view(run)


@blp.get("")
@blp.arguments(RunListArgs, location="query")
@blp.response(200, page_of(RunSchema))
def list_runs(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = runs.list_runs(session(), project, args["page"], args["page_size"], args["status"])
    return page_dict(page, run_views(page.items))


@blp.post("")
@blp.arguments(RunCreateSchema)
@blp.response(202, RunSchema)
def create_run(data: dict[str, Any], project_id: int) -> Any:
    """Plan every cell (case x target x repeat, per user turn for conversations) and start.
    422 VALIDATION_ERROR for bad input; 422 RUN_NOT_READY with every reason the run cannot
    start (errors.reasons: [{code, message, ...}]). A trace dataset's run is complete at
    once: the recorded trace is the output."""
    project, _ = project_access(project_id, Role.editor)
    return _start(plan_run(session(), user(), project, RunSpec.from_dict(data)))


@blp.post("/estimate")
@blp.arguments(RunCreateSchema)
@blp.response(200, RunEstimateResultSchema)
def estimate(data: dict[str, Any], project_id: int) -> Any:
    """What this run would cost: a range in micro-dollars per target and in total (unpriced
    models are listed, never counted as free), and every reason it could not start
    (`problems`). Writes nothing."""
    project, _ = project_access(project_id, Role.viewer)
    return estimate_run(session(), project, RunSpec.from_dict(data))


@blp.post("/demo")
@blp.response(202, RunSchema)
def create_demo_run(project_id: int) -> Any:
    """Every case of the demo dataset on the two fake-provider models (created if missing)."""
    project, _ = project_access(project_id, Role.editor)
    models = ensure_demo_models(session(), user(), project, runtime().settings.fake_provider_url)
    dataset = ensure_demo_dataset(session(), user(), project, demo_cases())
    spec = RunSpec(dataset_id=dataset.id, targets=tuple(TargetSpec(m.id) for m in models),
                   name="Demo run", concurrency=DEMO_CONCURRENCY)
    return _start(plan_run(session(), user(), project, spec))


@blp.get("/<int:run_id>")
@blp.response(200, RunSchema)
def get_run(project_id: int, run_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    return run_view(runs.get_run(session(), project, run_id))


@blp.get("/<int:run_id>/events")
@blp.doc(responses=sse_response(
    "Server-Sent Events of the run (RunEvent): run.started, run.progress, run.status, "
    "run.budget_alert, run.finished, and the scoring and comparison jobs' events; id is the "
    "Redis stream id (send Last-Event-ID to resume)", "RunEvent"))
def run_events(project_id: int, run_id: int) -> Response:
    project, _ = project_access(project_id, Role.viewer)
    run_id = runs.get_run(session(), project, run_id).id
    session().close()  # the stream can last hours: hold no connection meanwhile
    rt = runtime()

    def snapshot() -> dict[str, Any] | None:
        with db.factory() as fresh:
            return progress.snapshot(fresh, run_id) if runs.is_over(fresh, run_id) else None

    last_id = valid_last_id(request.headers.get("Last-Event-ID")
                            or request.args.get("last_event_id"))
    frames = sse(rt.redis, rt.events_key(run_id), last_id, rt.settings.sse_heartbeat_s, snapshot)
    return event_stream(frames)
