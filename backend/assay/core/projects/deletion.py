"""Deleting a project stops every piece of its work that calls a provider: its runs in
progress and its open experiments are cancelled here (rows), and `Stopping` names what the
caller must signal once committed (jobs/stops.py `stop_project`): the runs' shards, the
iterations' judges, the runs' scoring and pairwise jobs, the project's generation jobs.
Its own module: projects.service sits below runs and experiments control."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.experiments import control as experiment_control
from assay.core.experiments.models import Experiment, ExperimentStatus
from assay.core.projects.models import Project
from assay.core.runs import control as run_control
from assay.core.runs.models import Run


@dataclass
class Stopping:
    """What the deletion cancelled, for the workers to hear once it is committed."""

    project_id: int
    runs: list[int] = field(default_factory=list)  # cancelled: their shards stop
    iterations: list[int] = field(default_factory=list)  # their judging phase stops
    every_run: list[int] = field(default_factory=list)  # their scoring / pairwise jobs stop


def delete_project(session: Session, actor: User, project: Project) -> Stopping:
    """Soft delete: the project disappears for everyone now, its runs in progress and its
    open experiments are cancelled, and the retention job purges its rows after the grace
    period (ASSAY_PROJECT_GRACE_DAYS), so a mistaken deletion can still be undone by an
    operator."""
    audit.record(session, actor, "project.deleted", "project", project.id, None,
                 {"name": project.name, "slug": project.slug})
    project.deleted_at = utcnow()
    stopping = Stopping(project.id)
    for experiment in session.scalars(select(Experiment).where(
            Experiment.project_id == project.id,
            Experiment.status.in_([ExperimentStatus.running, ExperimentStatus.paused]))):
        iteration_id, run_id = experiment_control.latest_iteration(session, experiment)
        experiment_control.cancel(session, actor, experiment)
        if iteration_id is not None:
            stopping.iterations.append(iteration_id)
        if run_id is not None:
            stopping.runs.append(run_id)
    for run in session.scalars(select(Run).where(Run.project_id == project.id,
                                                 Run.status.in_(run_control.CANCELLABLE))):
        run_control.cancel(session, actor, run)
        stopping.runs.append(run.id)
    stopping.every_run = list(session.scalars(select(Run.id).where(
        Run.project_id == project.id)))
    return stopping
