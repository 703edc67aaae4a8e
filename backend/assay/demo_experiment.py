"""The demo tour's finished experiment: the customer-support template taken through the real
loop on the fake provider at seed time, reviewed the three ways a person can.

Iteration 1's first suggestion is rejected with a reason; the refiner answers again, and
that one is edited by hand (its added line gets a reviewer's tail) and approved; later
suggestions are approved as they come until the convergence rule ends the experiment. Every
number on its screens is what the engine stored, since the engine made it: the run's shards,
aggregation and the refiner run in this process (the loop's dispatches are recorded and done
here, in order), in a few seconds. Idempotent: an experiment of this name in the project
means it was seeded.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.experiments import loop, review, service, templates
from assay.core.experiments.models import Experiment, ExperimentStatus, Iteration
from assay.core.experiments.models import IterationStatus as I
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project

NAME = "Tour: support replies, refined"
TEMPLATE = "customer-support"
EDIT_TAIL = " Be kind."  # short: a diff may change the prompt by 15% at most
REJECT_REASON = "Not this one: our replies must stay short, try another angle."
MAX_STEPS = 200  # dispatches; a loop that runs away stops here (the seed logs it)


def _drive(calls: list[tuple[str, int]]) -> None:
    from assay.jobs.experiments import advance
    from assay.jobs.runs import execute_run

    steps = 0
    while calls:
        kind, ident = calls.pop(0)
        steps += 1
        if steps > MAX_STEPS:
            raise RuntimeError("the demo experiment did not settle")
        if kind == loop.RUN:
            execute_run(ident)
        else:
            advance(ident)


def edited(diff: str) -> str:
    """The suggestion's diff with the reviewer's words added to its new line(s)."""
    return "".join(line[:-1] + EDIT_TAIL + "\n" if line.startswith("+") and not
                   line.startswith("+++") and line.endswith("\n") else line
                   for line in diff.splitlines(keepends=True))


def _awaiting(session: Session, experiment: Experiment) -> Iteration | None:
    session.expire_all()
    return session.scalar(select(Iteration).where(
        Iteration.experiment_id == experiment.id,
        Iteration.status == I.awaiting_review))


def seed_experiment(session: Session, demo: User, project: Project, target: ModelConfig,
                    judge: ModelConfig) -> Experiment:
    found = session.scalar(select(Experiment).where(
        Experiment.project_id == project.id, Experiment.name == NAME))
    if found is not None:
        return found
    calls: list[tuple[str, int]] = []
    saved = loop._dispatcher
    loop.set_dispatcher(lambda kind, ident: calls.append((kind, ident)))
    try:
        draft = templates.apply(session, demo, project, templates.get(TEMPLATE))
        experiment = service.update(session, demo, project, draft, {
            "name": NAME,
            "description": "Seeded by the demo tour: edited, rejected and approved "
                           "suggestions, then a convergence stop.",
            "data": {"holdout_fraction": 0.3, "split_seed": 7},
            "models": {"targets": [{"model_id": target.id, "params": {}}]},
            "judges": {"pointwise": [judge.id], "refiner": judge.id},
            "stop": {"max_iterations": 6, "min_delta": 0.02, "convergence_window": 2,
                     "max_budget_micros": 20_000_000}})
        service.start(session, demo, project, experiment)
        session.commit()
        _review(session, demo, experiment, calls)
    finally:
        loop.set_dispatcher(saved)
    return experiment


def _review(session: Session, demo: User, experiment: Experiment,
            calls: list[tuple[str, int]]) -> None:
    rejected = False
    while True:
        _drive(calls)
        iteration = _awaiting(session, experiment)
        if iteration is None:
            break
        suggestion = review.suggestion_of(session, iteration)
        if iteration.number == 1 and not rejected:
            review.reject(session, demo, iteration, REJECT_REASON)
            session.commit()
            rejected = True
            continue
        if iteration.number == 1:
            review.edit(session, demo, iteration, edited(suggestion.diff or ""),
                        "Adds a word on tone")
        review.approve(session, demo, iteration)
        session.commit()
    session.refresh(experiment)
    if experiment.status == ExperimentStatus.running:
        raise RuntimeError("the demo experiment stopped before it finished")
