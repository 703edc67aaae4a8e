"""Iterations of an experiment, the review of their suggestions, loop control and progress.
Reads: viewer; review: reviewer and up; pause/resume/cancel: editor and up."""

from __future__ import annotations

import logging
from typing import Any

import redis
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
    sse_response,
    user,
)
from assay.api.iterations.schemas import (
    ApprovedSchema,
    ApproveSchema,
    CommentCreateSchema,
    CommentSchema,
    CounterexamplesAddedSchema,
    CounterexamplesSchema,
    EditSchema,
    ExperimentProgressSchema,
    IterationDetailSchema,
    IterationSchema,
    RejectSchema,
    SuggestionSchema,
)
from assay.core.experiments import control, progress, review
from assay.core.experiments.iterations import experiment_in, iteration_of, list_iterations
from assay.core.experiments.models import Experiment, Iteration
from assay.core.projects.models import Role
from assay.events.experiments import FINISHED, experiment_key, publish_snapshot
from assay.events.stream import sse, valid_last_id
from assay.extensions import db
from assay.jobs import stops

log = logging.getLogger(__name__)
blp = Blueprint("iterations", __name__,
                url_prefix="/api/projects/<int:project_id>/experiments/<int:experiment_id>",
                description="The experiment loop: iterations, review, control, progress")
ONE = "/iterations/<int:number>"


def _experiment(project_id: int, experiment_id: int, role: Role) -> Experiment:
    project, _ = project_access(project_id, role)
    return experiment_in(session(), project, experiment_id)


def _iteration(project_id: int, experiment_id: int, number: int,
               role: Role) -> Iteration:
    return iteration_of(session(), _experiment(project_id, experiment_id, role), number)


def _published(experiment: Experiment) -> None:
    """After a commit: the new state on the experiment's stream (best effort)."""
    try:
        publish_snapshot(runtime(), session(), experiment)
    except redis.RedisError:
        log.exception("experiment %s: progress not published", experiment.id)


def _suggestion_view(iteration: Iteration) -> dict[str, Any]:
    suggestion = review.suggestion_of(session(), iteration)
    view = {c: getattr(suggestion, c) for c in SuggestionSchema().fields if c != "comments"}
    view["comments"] = review.comments(session(), iteration)
    return view


@blp.get("/iterations")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(IterationSchema))
def list_experiment_iterations(args: dict[str, Any], project_id: int,
                               experiment_id: int) -> Any:
    experiment = _experiment(project_id, experiment_id, Role.viewer)
    page = list_iterations(session(), experiment, args["page"], args["page_size"])
    return page_dict(page, list(page.items))


@blp.get(ONE)
@blp.response(200, IterationDetailSchema)
def get_iteration(project_id: int, experiment_id: int, number: int) -> Any:
    """An iteration with its aggregate (composites and criteria with intervals, deltas)"""
    return _iteration(project_id, experiment_id, number, Role.viewer)


@blp.get(ONE + "/suggestion")
@blp.response(200, SuggestionSchema)
def get_suggestion(project_id: int, experiment_id: int, number: int) -> Any:
    """The iteration's latest suggestion, its exemplars and review comments (404: none yet)"""
    return _suggestion_view(_iteration(project_id, experiment_id, number, Role.viewer))


@blp.post(ONE + "/approve")
@blp.arguments(ApproveSchema)
@blp.response(200, ApprovedSchema)
def approve_suggestion(data: dict[str, Any], project_id: int, experiment_id: int,
                       number: int) -> Any:
    """Approve the suggestion

    Creates the next prompt version (parent, changelog, approver) and starts the next
    iteration unless a stop rule ends the experiment. 409 ALREADY_REVIEWED when another
    reviewer decided first."""
    iteration = _iteration(project_id, experiment_id, number, Role.reviewer)
    version = review.approve(session(), user(), iteration, data["comment"])
    experiment = session().get(Experiment, iteration.experiment_id)
    assert experiment is not None
    version_id, status = version.id, str(experiment.status)
    latest = progress.latest_iteration(session(), experiment.id)
    nxt = latest.number if latest is not None and latest.number > number else None
    commit()
    _published(experiment)
    return {"prompt_version_id": version_id, "next_iteration": nxt,
            "experiment_status": status}


@blp.post(ONE + "/reject")
@blp.arguments(RejectSchema)
@blp.response(200, SuggestionSchema)
def reject_suggestion(data: dict[str, Any], project_id: int, experiment_id: int,
                      number: int) -> Any:
    """Reject the suggestion with a reason; the refiner proposes again, told why (after
    `stop.max_rejections` rejections in a row the experiment stops, reason `rejected`)"""
    iteration = _iteration(project_id, experiment_id, number, Role.reviewer)
    review.reject(session(), user(), iteration, data["reason"])
    commit()
    return _suggestion_view(iteration)


@blp.post(ONE + "/edit")
@blp.arguments(EditSchema)
@blp.response(200, SuggestionSchema)
def edit_suggestion(data: dict[str, Any], project_id: int, experiment_id: int,
                    number: int) -> Any:
    """Replace the suggestion's diff (422 when it breaks a guardrail)"""
    iteration = _iteration(project_id, experiment_id, number, Role.reviewer)
    review.edit(session(), user(), iteration, data["diff"], data["comment"])
    commit()
    return _suggestion_view(iteration)


@blp.post(ONE + "/comments")
@blp.arguments(CommentCreateSchema)
@blp.response(201, CommentSchema)
def comment_suggestion(data: dict[str, Any], project_id: int, experiment_id: int,
                       number: int) -> Any:
    """Comment on the suggestion (kept with it and in the audit log)"""
    iteration = _iteration(project_id, experiment_id, number, Role.reviewer)
    comment = review.add_comment(session(), user(), iteration, data["body"])
    commit()
    return comment


@blp.post(ONE + "/counterexamples")
@blp.arguments(CounterexamplesSchema)
@blp.response(201, CounterexamplesAddedSchema)
def add_counterexamples(data: dict[str, Any], project_id: int, experiment_id: int,
                        number: int) -> Any:
    """Add cases to a new dataset version, used from the next iteration"""
    iteration = _iteration(project_id, experiment_id, number, Role.reviewer)
    version = review.add_counterexamples(session(), user(), iteration, data["cases"])
    commit()
    return {"dataset_version_id": version.id, "dataset_version": version.number,
            "cases": len(data["cases"])}


def _control(project_id: int, experiment_id: int, action: str) -> dict[str, Any]:
    experiment = _experiment(project_id, experiment_id, Role.editor)
    getattr(control, action)(session(), user(), experiment)
    commit()
    if action != "resume":  # the iteration's run, or its judges, abort their calls in flight
        iteration_id, run_id = control.latest_iteration(session(), experiment)
        if run_id is not None:
            stops.request(runtime(), stops.RUN, run_id)
        if iteration_id is not None:
            stops.request(runtime(), stops.ITERATION, iteration_id)
    _published(experiment)
    return progress.snapshot(session(), experiment)


@blp.post("/pause")
@blp.response(200, ExperimentProgressSchema)
def pause_experiment(project_id: int, experiment_id: int) -> Any:
    """Pause the current iteration at its phase (the run stops claiming cells)"""
    return _control(project_id, experiment_id, "pause")


@blp.post("/resume")
@blp.response(200, ExperimentProgressSchema)
def resume_experiment(project_id: int, experiment_id: int) -> Any:
    """Resume the paused iteration where it was"""
    return _control(project_id, experiment_id, "resume")


@blp.post("/cancel")
@blp.response(200, ExperimentProgressSchema)
def cancel_experiment(project_id: int, experiment_id: int) -> Any:
    """Cancel: what is done is kept; the experiment ends (stop reason: cancelled)"""
    return _control(project_id, experiment_id, "cancel")


@blp.get("/progress")
@blp.response(200, ExperimentProgressSchema)
def experiment_progress(project_id: int, experiment_id: int) -> Any:
    """The live state, for clients without Server-Sent Events (poll it)"""
    return progress.snapshot(session(), _experiment(project_id, experiment_id, Role.viewer))


@blp.get("/events")
@blp.doc(responses=sse_response(
    "Server-Sent Events of the experiment (ExperimentEvent): experiment.progress (phase, "
    "counts, spend, suggestion ready), experiment.finished; id is the Redis stream id "
    "(send Last-Event-ID to resume)", "ExperimentEvent"))
def experiment_events(project_id: int, experiment_id: int) -> Response:
    experiment_id = _experiment(project_id, experiment_id, Role.viewer).id
    session().close()  # the stream can last hours: hold no connection meanwhile
    rt = runtime()

    def snapshot() -> dict[str, Any] | None:
        with db.factory() as fresh:
            found = fresh.get(Experiment, experiment_id)
            if found is None:
                return None
            data = progress.snapshot(fresh, found)
            return data if data["ended"] else None

    last_id = valid_last_id(request.headers.get("Last-Event-ID")
                            or request.args.get("last_event_id"))
    frames = sse(rt.redis, experiment_key(rt.settings.redis_prefix, experiment_id), last_id,
                 rt.settings.sse_heartbeat_s, snapshot, finished=FINISHED)
    return event_stream(frames)
