"""Progress events of an experiment: one capped Redis Stream per experiment (the stream id
is the SSE event id, so a client resumes with Last-Event-ID). Each event carries the
experiment's whole snapshot (core/experiments/progress.py): a client that missed some
loses nothing but intermediate counts."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from assay.core.experiments import progress
from assay.core.experiments.models import Experiment, Iteration
from assay.events.publish import publish

PROGRESS, FINISHED = "experiment.progress", "experiment.finished"


def experiment_key(prefix: str, experiment_id: int) -> str:
    return f"{prefix}:experiment:{experiment_id}:events"


def publish_snapshot(rt: Any, session: Session, experiment: Experiment) -> str:
    data = progress.snapshot(session, experiment)
    kind = FINISHED if data["ended"] else PROGRESS
    return publish(rt.redis, experiment_key(rt.settings.redis_prefix, experiment.id), kind,
                   data, rt.settings.stream_maxlen)


def publish_experiment(rt: Any, session: Session, iteration_id: int) -> None:
    iteration = session.get(Iteration, iteration_id)
    experiment = session.get(Experiment, iteration.experiment_id) if iteration else None
    if experiment is not None:
        publish_snapshot(rt, session, experiment)


def base_snapshot(session: Session, run_id: int) -> dict[str, Any] | None:
    """The experiment's snapshot when the run executes one of its iterations, else None:
    taken once per run, then each run progress event only fills in the run's counts
    (forward), so forwarding costs the shard no query."""
    from sqlalchemy import select

    iteration = session.scalar(select(Iteration).where(Iteration.run_id == run_id))
    experiment = session.get(Experiment, iteration.experiment_id) if iteration else None
    return None if experiment is None else progress.snapshot(session, experiment)


def forward(rt: Any, base: dict[str, Any], run: dict[str, Any]) -> str:
    """The experiment's stream gets the run's counts and spend (from its progress event)."""
    iteration = {**(base.get("iteration") or {}), "run_status": run.get("status"),
                 "total": run.get("total", 0), "succeeded": run.get("succeeded", 0),
                 "failed": run.get("failed", 0), "skipped": run.get("skipped", 0),
                 "run_spent_micros": run.get("spent_micros", 0)}
    spent = base["spent_micros"] - (base.get("iteration") or {}).get("run_spent_micros", 0) \
        + iteration["run_spent_micros"]
    data = {**base, "iteration": iteration, "spent_micros": spent}
    return publish(rt.redis, experiment_key(rt.settings.redis_prefix, base["experiment_id"]),
                   PROGRESS, data, rt.settings.stream_maxlen)


