"""An experiment's live state (edison FR-EE-002): the phase of its latest iteration, the
run's counts while it executes, spend against the cap, and whether a suggestion awaits
review. The SSE events carry it, and the polling endpoint returns it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.experiments.models import (
    EXPERIMENT_ENDED,
    Experiment,
    Iteration,
    IterationStatus,
    Suggestion,
    SuggestionStatus,
)
from assay.core.runs.models import Run


def latest_iteration(session: Session, experiment_id: int) -> Iteration | None:
    return session.scalar(select(Iteration).where(Iteration.experiment_id == experiment_id)
                          .order_by(Iteration.number.desc()).limit(1))


DELTA_KEYS = ("n", "mean_difference", "low", "high", "verdict")


def delta_of(aggregate: dict[str, Any] | None) -> dict[str, Any] | None:
    """The best model's paired delta vs the previous iteration, on all and held-out cases
    (None before iteration 2 is aggregated): the live panel shows it with the phase."""
    aggregate = aggregate or {}
    best = aggregate.get("best_model")
    found = (aggregate.get("delta") or {}).get(best) if best else None
    if not found:
        return None
    picked = {split: {k: found[split].get(k) for k in DELTA_KEYS}
              if (found.get(split) or {}).get("n") else None for split in ("all", "holdout")}
    return {"model": best, **picked}


def snapshot(session: Session, experiment: Experiment) -> dict[str, Any]:
    session.refresh(experiment)
    iteration = latest_iteration(session, experiment.id)
    current: dict[str, Any] | None = None
    if iteration is not None:
        run = session.get(Run, iteration.run_id) if iteration.run_id else None
        if run is not None:
            session.refresh(run)
        ready = iteration.status == IterationStatus.awaiting_review and session.scalar(
            select(Suggestion.id).where(Suggestion.iteration_id == iteration.id,
                                        Suggestion.status == SuggestionStatus.pending)
            .limit(1)) is not None
        current = {
            "id": iteration.id, "number": iteration.number, "phase": iteration.status,
            "paused": iteration.paused, "run_id": iteration.run_id,
            "run_status": run.status if run else None,
            "total": run.total if run else 0, "succeeded": run.succeeded if run else 0,
            "failed": run.failed if run else 0, "skipped": run.skipped if run else 0,
            "run_spent_micros": run.spent_micros if run else 0,
            "composite": iteration.composite, "holdout_composite": iteration.holdout_composite,
            "suggestion_ready": ready, "delta": delta_of(iteration.aggregate)}
    in_run = (current or {}).get("run_spent_micros", 0) if (
        iteration is not None and iteration.status == IterationStatus.executing) else 0
    return {
        "experiment_id": experiment.id, "status": experiment.status,
        "stop_reason": experiment.stop_reason, "stop_detail": experiment.stop_detail,
        # spend so far: the phases settled, plus the running iteration's run
        "spent_micros": experiment.spent_micros + in_run,
        "budget_micros": experiment.budget_micros,
        "tokens": experiment.tokens_in + experiment.tokens_out,
        "ended": experiment.status in EXPERIMENT_ENDED,
        "iteration": current,
    }
