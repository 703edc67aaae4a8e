"""Runs: start (202), list, read, outputs, and the live progress stream (SSE)."""

from __future__ import annotations

from typing import Any

from flask import Response, request

from assay.api.base import (
    Blueprint,
    PageArgs,
    commit,
    event_stream,
    page_dict,
    page_of,
    project_access,
    runtime,
    session,
    user,
)
from assay.api.runs.schemas import (
    OutputSchema,
    RunCreateSchema,
    RunEstimateResultSchema,
    RunEstimateSchema,
    RunSchema,
)
from assay.core.datasets.service import ensure_demo_dataset
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.models import Role
from assay.core.runs import service as runs
from assay.core.runs.estimate import estimate_run
from assay.core.runs.models import TERMINAL, Run, RunStatus
from assay.events.stream import sse, valid_last_id
from assay.extensions import db
from assay.jobs.queues import enqueue_run
from assay.seeds import demo_cases

DEMO_CONCURRENCY = 4  # small on purpose: the demo's progress visibly moves

blp = Blueprint("runs", __name__, url_prefix="/api/projects/<int:project_id>/runs",
                description="Runs and their progress")


def _views(items: list[Run]) -> list[dict[str, Any]]:
    targets = runs.target_model_ids(session(), [r.id for r in items])
    return [{**{c: getattr(r, c) for c in RunSchema().fields if c != "model_ids"},
             "model_ids": targets[r.id]} for r in items]


def _start(run: Run) -> dict[str, Any]:
    commit()
    enqueue_run(runtime(), run.id)
    return _views([run])[0]


@blp.get("")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(RunSchema))
def list_runs(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = runs.list_runs(session(), project, args["page"], args["page_size"])
    return page_dict(page, _views(page.items))


@blp.post("")
@blp.arguments(RunCreateSchema)
@blp.response(202, RunSchema)
def create_run(data: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.editor)
    return _start(runs.create_run(session(), user(), project, data["dataset_id"],
                                  data["model_ids"], data["name"], data["repeats"],
                                  data["concurrency"], data["cache"], data["stream"],
                                  data["timeout_s"]))


@blp.post("/estimate")
@blp.arguments(RunEstimateSchema)
@blp.response(200, RunEstimateResultSchema)
def estimate(data: dict[str, Any], project_id: int) -> Any:
    """What a run of these models over the dataset's latest version would cost: a range
    in micro-dollars (unpriced models are listed, never counted as free). Writes nothing."""
    project, _ = project_access(project_id, Role.viewer)
    return estimate_run(session(), project, data["dataset_id"], data["model_ids"],
                        data["repeats"])


@blp.post("/demo")
@blp.response(202, RunSchema)
def create_demo_run(project_id: int) -> Any:
    """Every case of the demo dataset on the two fake-provider models (created if missing)."""
    project, _ = project_access(project_id, Role.editor)
    models = ensure_demo_models(session(), user(), project, runtime().settings.fake_provider_url)
    dataset = ensure_demo_dataset(session(), user(), project, demo_cases())
    return _start(runs.create_run(session(), user(), project, dataset.id,
                                  [m.id for m in models], "Demo run",
                                  concurrency=DEMO_CONCURRENCY))


@blp.get("/<int:run_id>")
@blp.response(200, RunSchema)
def get_run(project_id: int, run_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    return _views([runs.get_run(session(), project, run_id)])[0]


@blp.get("/<int:run_id>/outputs")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(OutputSchema))
def list_outputs(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    page = runs.list_outputs(session(), run, args["page"], args["page_size"])
    return page_dict(page, [
        {**{c: getattr(o, c) for c in OutputSchema().fields
            if c not in {"model_id", "model_name", "error"}},
         "model_id": model_id, "model_name": name, "error": o.error_message}
        for o, model_id, name in page.items])


@blp.get("/<int:run_id>/events")
@blp.doc(responses={200: {"description": "Server-Sent Events: run.started, run.progress, "
                          "run.finished; id is the Redis stream id (send Last-Event-ID "
                          "to resume)", "content": {"text/event-stream": {"schema": {
                              "type": "string"}}}}})
def run_events(project_id: int, run_id: int) -> Response:
    project, _ = project_access(project_id, Role.viewer)
    run_id = runs.get_run(session(), project, run_id).id
    session().close()  # the stream can last hours: hold no connection meanwhile
    rt = runtime()

    def snapshot() -> dict[str, Any] | None:
        with db.factory() as fresh:
            run = fresh.get(Run, run_id)
            return runs.progress(run) if run and RunStatus(run.status) in TERMINAL else None

    last_id = valid_last_id(request.headers.get("Last-Event-ID")
                            or request.args.get("last_event_id"))
    frames = sse(rt.redis, rt.events_key(run_id), last_id, rt.settings.sse_heartbeat_s, snapshot)
    return event_stream(frames)
