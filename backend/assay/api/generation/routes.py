"""Generating evaluation data with an LLM: estimate, start (202, a job), read the preview,
follow its progress (SSE), accept chosen items into a dataset."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Response, request
from sqlalchemy.exc import IntegrityError

from assay.api.base import (
    Blueprint,
    PageArgs,
    commit,
    event_stream,
    page_of,
    project_access,
    runtime,
    session,
    sse_response,
    user,
)
from assay.api.generation.schemas import (
    AcceptedSchema,
    AcceptSchema,
    CasesRequestSchema,
    ConversationsRequestSchema,
    EstimateSchema,
    JobSchema,
    JobSummarySchema,
    QuestionsRequestSchema,
)
from assay.core.errors import Conflict
from assay.core.generation import service, store
from assay.core.projects.models import Role
from assay.events.stream import sse, valid_last_id
from assay.jobs.generation import FINISHED, cancel_generation, enqueue_generation

blp = Blueprint("generation", __name__, url_prefix="/api/projects/<int:project_id>/generation",
                description="Generating questions, test cases and grounded conversations")
ONE = "/<int:job_id>"


def _when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def view(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "created_at": _when(state["created_at"]),
            "finished_at": _when(state.get("finished_at"))}


def _prefix() -> str:
    return runtime().settings.redis_prefix


def _start(project_id: int, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    project, _ = project_access(project_id, Role.editor)
    state = service.start(session(), runtime().redis, _prefix(), user(), project, kind, data)
    commit()
    enqueue_generation(runtime(), state["id"])
    return view(state)


def _estimate(project_id: int, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    project, _ = project_access(project_id, Role.viewer)
    return service.estimate_job(session(), project, kind, data)


@blp.get("")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(JobSummarySchema))
def list_jobs(args: dict[str, Any], project_id: int) -> Any:
    """The project's generation jobs still kept (a week), newest first."""
    project, _ = project_access(project_id, Role.viewer)
    states, total = store.project_jobs(runtime().redis, _prefix(), project.id, args["page"],
                                       args["page_size"])
    return {"items": [view(s) for s in states], "total": total, "page": args["page"],
            "page_size": args["page_size"]}


@blp.post("/questions")
@blp.arguments(QuestionsRequestSchema)
@blp.response(202, JobSchema)
def generate_questions(data: dict[str, Any], project_id: int) -> Any:
    return _start(project_id, "questions", data)


@blp.post("/questions/estimate")
@blp.arguments(QuestionsRequestSchema)
@blp.response(200, EstimateSchema)
def estimate_questions(data: dict[str, Any], project_id: int) -> Any:
    """What generating these questions may cost (micro-dollars, a range). Writes nothing."""
    return _estimate(project_id, "questions", data)


@blp.post("/cases")
@blp.arguments(CasesRequestSchema)
@blp.response(202, JobSchema)
def generate_cases(data: dict[str, Any], project_id: int) -> Any:
    return _start(project_id, "cases", data)


@blp.post("/cases/estimate")
@blp.arguments(CasesRequestSchema)
@blp.response(200, EstimateSchema)
def estimate_cases(data: dict[str, Any], project_id: int) -> Any:
    """What generating these cases may cost (micro-dollars, a range). Writes nothing."""
    return _estimate(project_id, "cases", data)


@blp.post("/conversations")
@blp.arguments(ConversationsRequestSchema)
@blp.response(202, JobSchema)
def generate_conversations(data: dict[str, Any], project_id: int) -> Any:
    return _start(project_id, "conversations", data)


@blp.post("/conversations/estimate")
@blp.arguments(ConversationsRequestSchema)
@blp.response(200, EstimateSchema)
def estimate_conversations(data: dict[str, Any], project_id: int) -> Any:
    """What generating these conversations may cost (micro-dollars, a range). Writes
    nothing."""
    return _estimate(project_id, "conversations", data)


@blp.get(ONE)
@blp.response(200, JobSchema)
def get_job(project_id: int, job_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    return view(store.get(runtime().redis, _prefix(), project.id, job_id))


@blp.post(ONE + "/cancel")
@blp.response(202, JobSchema)
def cancel_job(project_id: int, job_id: int) -> Any:
    """Cancel a queued or running job: its requests in flight are closed, the batches done
    are kept (status cancelled, their items accepted like a partial job's) and their
    cost is the project's. 409 once the job has ended."""
    project, _ = project_access(project_id, Role.editor)
    state = store.get(runtime().redis, _prefix(), project.id, job_id)
    if state["status"] in store.TERMINAL:
        raise Conflict(f"The generation job has ended: it is {state['status']}",
                       {"status": state["status"]}, code="JOB_ENDED")
    cancel_generation(runtime(), job_id)
    return view(state)


@blp.post(ONE + "/accept")
@blp.arguments(AcceptSchema)
@blp.response(201, AcceptedSchema)
def accept(data: dict[str, Any], project_id: int, job_id: int) -> Any:
    """A new dataset (of the job's kind) with the selected items of the preview."""
    project, _ = project_access(project_id, Role.editor)
    dataset, cases = service.accept(session(), runtime().redis, _prefix(), user(), project,
                                    job_id, data["dataset_name"], data["selected"])
    try:
        commit()
    except IntegrityError as error:  # a concurrent request took the name first
        session().rollback()
        raise service.name_taken() from error
    service.record_accepted(runtime().redis, _prefix(), project, job_id, dataset.id)
    return {"dataset_id": dataset.id, "name": dataset.name, "kind": dataset.kind,
            "cases": cases}


@blp.get(ONE + "/events")
@blp.doc(responses=sse_response(
    "Server-Sent Events (GenerationEvent): generation.started, generation.progress (one per "
    "batch), generation.finished; id is the Redis stream id (send Last-Event-ID to resume)",
    "GenerationEvent"))
def job_events(project_id: int, job_id: int) -> Response:
    project, _ = project_access(project_id, Role.viewer)
    rt, prefix = runtime(), _prefix()
    store.get(rt.redis, prefix, project.id, job_id)
    session().close()  # hold no database connection while streaming

    def snapshot() -> dict[str, Any] | None:
        state = store.load(rt.redis, prefix, job_id)
        if state is None or state["status"] in store.TERMINAL:
            return {"type": FINISHED, **(service.progress(state) if state else
                                         {"job_id": job_id, "status": "expired"})}
        return None

    last_id = valid_last_id(request.headers.get("Last-Event-ID")
                            or request.args.get("last_event_id"))
    return event_stream(sse(rt.redis, store.events_key(prefix, job_id), last_id,
                            rt.settings.sse_heartbeat_s, snapshot, finished=FINISHED))
