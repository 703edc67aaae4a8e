"""A run's progress snapshot: the data of every run event and of the polling endpoint.

The engine takes one after every batch it records, so it reads only counters (the run's,
its targets', its project's) plus one GROUP BY over the run's failed and skipped cells,
which the (run_id, status, ...) index of outputs keeps to those rows: never an aggregate
over all the outputs of a 100,000-cell run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core.base import utcnow
from assay.core.errors import NotFound
from assay.core.projects.models import Project
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget

ENDED_CELLS = (CellStatus.failed, CellStatus.skipped)  # the cells that carry an error class


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def errors_by_target(session: Session, run_id: int) -> dict[int, dict[str, int]]:
    """target id -> {error class: cells}, over the run's failed and skipped cells."""
    rows = session.execute(
        select(Output.target_id, Output.error_class, func.count())
        .where(Output.run_id == run_id, Output.status.in_(ENDED_CELLS))
        .group_by(Output.target_id, Output.error_class))
    out: dict[int, dict[str, int]] = {}
    for target_id, error_class, count in rows:
        errors = out.setdefault(target_id, {})
        key = error_class or "unknown"
        errors[key] = errors.get(key, 0) + count
    return out


def timing(run: Run, done: int, now: datetime | None = None) -> tuple[float, float | None]:
    """(elapsed seconds, ETA seconds). Elapsed runs from the start to the finish (or now);
    the ETA (the open cells at the pace of the `done` ones so far) is None unless the run
    is running and has done some cells."""
    if run.started_at is None:
        return 0.0, None
    end = run.finished_at or now or utcnow()
    elapsed = max(0.0, (end - run.started_at).total_seconds())
    if run.status != RunStatus.running or run.finished_at is not None or done <= 0:
        return round(elapsed, 3), None
    remaining = max(0, run.total - done - run.skipped)
    return round(elapsed, 3), round(remaining * elapsed / done, 3)


def snapshot(session: Session, run_id: int) -> dict[str, Any]:
    """The Progress payload (api/runs/results_schemas.py ProgressSchema), JSON-ready."""
    run = session.get(Run, run_id, populate_existing=True)
    if run is None:
        raise NotFound("Run not found")
    budget = session.execute(select(Project.budget_micros, Project.spent_micros)
                             .where(Project.id == run.project_id)).one_or_none()
    targets = list(session.scalars(
        select(RunTarget).where(RunTarget.run_id == run_id)
        .order_by(RunTarget.position, RunTarget.id)
        .execution_options(populate_existing=True)))
    errors = errors_by_target(session, run_id)
    overall: dict[str, int] = {}
    for per_target in errors.values():
        for key, count in per_target.items():
            overall[key] = overall.get(key, 0) + count
    # Done means sent and answered (or failed): skipped cells were never sent, so a run
    # cancelled at 20% shows 20% done, with its skipped cells counted on their own.
    done = run.succeeded + run.failed
    elapsed_s, eta_s = timing(run, done)
    return {
        "run_id": run.id, "status": run.status, "total": run.total, "done": done,
        "succeeded": run.succeeded, "failed": run.failed, "skipped": run.skipped,
        "spent_micros": run.spent_micros, "judge_spent_micros": run.judge_spent_micros,
        "reserved_micros": run.reserved_micros,
        "budget_micros": run.budget_micros,
        "project_budget_micros": budget.budget_micros if budget else None,
        "project_spent_micros": budget.spent_micros if budget else 0,
        "tokens_in": run.tokens_in, "tokens_out": run.tokens_out,
        "elapsed_s": elapsed_s, "eta_s": eta_s,
        "started_at": _iso(run.started_at), "finished_at": _iso(run.finished_at),
        "error": run.error, "errors": overall,
        "targets": [{
            "target_id": t.id, "label": t.label, "total": t.total, "succeeded": t.succeeded,
            "failed": t.failed, "skipped": t.skipped, "spent_micros": t.spent_micros,
            "tokens_in": t.tokens_in, "tokens_out": t.tokens_out,
            "errors": errors.get(t.id, {})} for t in targets],
    }

