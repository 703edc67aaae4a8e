"""Scoring a finished run after the fact: add scorer versions (202, the scoring job scores
every recorded output they have not scored) and estimate what that may cost."""

from __future__ import annotations

from typing import Any

from flask import Response, request

from assay.api.base import (
    commit,
    event_stream,
    project_access,
    runtime,
    session,
    sse_response,
    user,
)
from assay.api.runs.attach_schemas import (
    AttachEstimateSchema,
    AttachScorersSchema,
    JobsStoppingSchema,
    ScoringStartedSchema,
)
from assay.api.runs.blueprint import blp
from assay.api.runs.views import run_view
from assay.core.projects.models import Role
from assay.core.runs import service as runs
from assay.core.scoring.attach import attach_scorers, estimate_attach
from assay.events.publish import SCORING_FINISHED
from assay.events.stream import sse, valid_last_id
from assay.jobs import stops
from assay.jobs.queues import enqueue_scoring, scoring_active

IDLE_GRACE_MS = 100


def _last_event_id(run_id: int) -> str:
    """The newest id of the run's stream: the new job's events all come after it."""
    rt = runtime()
    newest = rt.redis.xrevrange(rt.events_key(run_id), count=1)
    if not newest:
        return "0-0"
    raw = newest[0][0]
    return raw.decode() if isinstance(raw, bytes) else str(raw)


@blp.post("/<int:run_id>/scorers")
@blp.arguments(AttachScorersSchema)
@blp.response(202, ScoringStartedSchema)
def add_scorers(data: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Pin more scorer versions on a finished run and score its recorded outputs with them
    in the background, within the run's and project's budgets; follow the job on
    /scorers/events?last_event_id=<events_after>. 409 RUN_NOT_FINISHED while the run is
    still going; 422 naming each version that is unknown, archived, a pairwise judge or
    already pinned."""
    project, _ = project_access(project_id, Role.editor)
    run = runs.get_run(session(), project, run_id)
    attach_scorers(session(), user(), project, run, data["scorer_version_ids"])
    commit()
    after = _last_event_id(run.id)
    enqueue_scoring(runtime(), run.id)
    return {"run": run_view(run), "events_after": after}


@blp.post("/<int:run_id>/scorers/cancel")
@blp.response(202, JobsStoppingSchema)
def cancel_scoring(project_id: int, run_id: int) -> Any:
    """Cancel the run's scoring jobs (adding scorers, judge mode): the judges' calls in
    flight are closed, the outputs judged by then keep their scores and their judges' cost,
    and the job ends with run.scoring_finished {stopped: cancelled}. Adding scorers again
    scores what is left. stopping: false when no scoring job was queued or running."""
    project, _ = project_access(project_id, Role.editor)
    run = runs.get_run(session(), project, run_id)
    active = scoring_active(runtime(), run.id)
    if active:
        stops.request(runtime(), stops.SCORING, run.id)
    return {"run_id": run.id, "stopping": active}


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


@blp.get("/<int:run_id>/scorers/events")
@blp.doc(responses=sse_response(
    "Server-Sent Events of the scoring job, from the run's own stream (RunEvent): "
    "run.scored {scores: written so far} per page, then run.scoring_finished {scores, "
    "stopped?}, or {idle: true} when no job is queued or running; without last_event_id "
    "(the events_after of the POST) or Last-Event-ID the run's earlier events come first.",
    "RunEvent"))
def scoring_events(project_id: int, run_id: int) -> Response:
    project, _ = project_access(project_id, Role.viewer)
    run_id = runs.get_run(session(), project, run_id).id
    session().close()  # the stream can last long: hold no connection meanwhile
    rt = runtime()
    last_id = valid_last_id(request.headers.get("Last-Event-ID")
                            or request.args.get("last_event_id"))

    def idle() -> dict[str, Any] | None:  # no job queued or running: the stream ends
        return None if scoring_active(rt, run_id) else {"run_id": run_id, "idle": True}

    # A job publishes its end before it lets go of the lock: no need to wait for it long.
    frames = sse(rt.redis, rt.events_key(run_id), last_id, rt.settings.sse_heartbeat_s,
                 idle, finished=SCORING_FINISHED, grace_ms=IDLE_GRACE_MS)
    return event_stream(frames)
