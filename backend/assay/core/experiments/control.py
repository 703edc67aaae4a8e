"""Pause, resume and cancel an experiment's open iteration, at any phase (edison FR-EE-003,
FR-EE-004).

- executing: the iteration's run is paused / resumed / cancelled through run control (shards
  stop claiming and abort the calls in flight: jobs/stops.py).
- judging, aggregating, refining, awaiting review: the iteration is flagged paused (the judges'
  calls in flight are closed: jobs/stops.py); a step that finds the flag stops before moving
  it, and resume hands the step to a job again (the step starts over from the iteration's
  status: nothing is done twice).
Cancel keeps what is done and ends the experiment (stop reason: cancelled).
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.experiments import loop
from assay.core.experiments.models import (
    EXPERIMENT_ENDED,
    Experiment,
    ExperimentStatus,
    Iteration,
    IterationStatus,
    StopReason,
)
from assay.core.runs import control as run_control
from assay.core.runs.models import TERMINAL, Run, RunStatus

I = IterationStatus  # noqa: E741


def open_iteration(session: Session, experiment: Experiment) -> Iteration:
    found = session.scalar(select(Iteration).where(
        Iteration.experiment_id == experiment.id,
        Iteration.status.in_([s.value for s in loop.OPEN])).order_by(Iteration.number.desc())
        .limit(1))
    if found is None:
        raise loop.LoopError("The experiment has no iteration in progress")
    return found


def latest_iteration(session: Session, experiment: Experiment
                     ) -> tuple[int | None, int | None]:
    """(the experiment's newest iteration, its run), None for what it has not."""
    row = session.execute(select(Iteration.id, Iteration.run_id).where(
        Iteration.experiment_id == experiment.id).order_by(Iteration.number.desc())
        .limit(1)).first()
    return (None, None) if row is None else (row.id, row.run_id)


def _run(session: Session, iteration: Iteration) -> Run | None:
    return session.get(Run, iteration.run_id) if iteration.run_id else None


def _set_paused(session: Session, iteration: Iteration, paused: bool) -> bool:
    moved = session.execute(update(Iteration).where(
        Iteration.id == iteration.id, Iteration.paused.is_(not paused),
        Iteration.status.in_([s.value for s in loop.OPEN])).values(paused=paused)
        .execution_options(synchronize_session=False))
    session.expire(iteration)
    return bool(getattr(moved, "rowcount", 0))


def pause(session: Session, actor: User, experiment: Experiment) -> Iteration:
    iteration = open_iteration(session, experiment)
    if not _set_paused(session, iteration, True):
        raise loop.LoopError("The iteration is paused already")
    run = _run(session, iteration)
    if iteration.status == I.executing and run is not None and \
            run.status in run_control.PAUSABLE:
        run_control.pause(session, actor, run)
    experiment.status = ExperimentStatus.paused
    audit.record(session, actor, "experiment.paused", "experiment", experiment.id,
                 experiment.project_id, {"iteration": iteration.number,
                                         "phase": iteration.status})
    return iteration


def resume(session: Session, actor: User, experiment: Experiment) -> Iteration:
    iteration = open_iteration(session, experiment)
    if not _set_paused(session, iteration, False):
        raise loop.LoopError("The iteration is not paused")
    run = _run(session, iteration)
    if iteration.status == I.executing and run is not None:
        if run.status == RunStatus.paused:
            run_control.resume(session, actor, run)
            loop.after_commit(session, loop.RUN, run.id)
        elif run.status in TERMINAL:
            loop.after_commit(session, loop.ADVANCE, iteration.id)  # ended while paused
    elif iteration.status in (I.judging, I.aggregating, I.refining):
        loop.after_commit(session, loop.ADVANCE, iteration.id)
    experiment.status = ExperimentStatus.running
    audit.record(session, actor, "experiment.resumed", "experiment", experiment.id,
                 experiment.project_id, {"iteration": iteration.number,
                                         "phase": iteration.status})
    return iteration


def cancel(session: Session, actor: User, experiment: Experiment) -> Experiment:
    if experiment.status in EXPERIMENT_ENDED:
        raise loop.LoopError(f"The experiment is {experiment.status} already")
    iteration = session.scalar(select(Iteration).where(
        Iteration.experiment_id == experiment.id,
        Iteration.status.in_([s.value for s in loop.OPEN])).limit(1))
    if iteration is not None:
        run = _run(session, iteration)
        if run is not None and run.status in run_control.CANCELLABLE:
            run_control.cancel(session, actor, run)
    who = actor.email if actor else "the system"
    loop.finish(session, experiment, iteration, StopReason.cancelled, f"Cancelled by {who}",
                ExperimentStatus.cancelled, actor)
    session.refresh(experiment)
    return experiment
