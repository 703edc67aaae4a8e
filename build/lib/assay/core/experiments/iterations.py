"""Reading an experiment's iterations (the loop's side of the API)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.errors import NotFound
from assay.core.experiments.models import Experiment, Iteration
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project


def experiment_in(session: Session, project: Project, experiment_id: int) -> Experiment:
    found = session.get(Experiment, experiment_id)
    if found is None or found.project_id != project.id:
        raise NotFound("Experiment not found")
    return found


def iteration_of(session: Session, experiment: Experiment, number: int) -> Iteration:
    found = session.scalar(select(Iteration).where(Iteration.experiment_id == experiment.id,
                                                   Iteration.number == number))
    if found is None:
        raise NotFound("Iteration not found")
    return found


def list_iterations(session: Session, experiment: Experiment, page: int,
                    page_size: int) -> Page[Iteration]:
    return paginate(session, select(Iteration).where(Iteration.experiment_id == experiment.id)
                    .order_by(Iteration.number), page, page_size)
