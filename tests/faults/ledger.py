"""The books of a run, read straight from the database, and the invariants they must keep."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from assay.core.projects.models import Project
from assay.core.runs.models import CellStatus, Output, Run, RunTarget
from assay.extensions import db


def books(run_id: int) -> dict[str, Any]:
    with db.factory() as session:
        run = session.get(Run, run_id)
        assert run is not None
        project = session.get(Project, run.project_id)
        assert project is not None
        sums = session.execute(select(
            func.count(), func.coalesce(func.sum(Output.cost_micros), 0),
            func.coalesce(func.sum(Output.reserved_micros), 0))
            .where(Output.run_id == run_id)).one()
        keys = session.scalar(select(func.count()).select_from(
            select(Output.case_id, Output.target_id, Output.repeat, Output.turn)
            .where(Output.run_id == run_id).distinct().subquery()))
        targets = session.execute(select(
            func.sum(RunTarget.spent_micros), func.sum(RunTarget.succeeded),
            func.sum(RunTarget.failed), func.sum(RunTarget.skipped))
            .where(RunTarget.run_id == run_id)).one()
        counts = dict(session.execute(select(Output.status, func.count())
                                      .where(Output.run_id == run_id)
                                      .group_by(Output.status)).all())
        unclassified = session.scalar(select(func.count()).where(
            Output.run_id == run_id, Output.status.in_([CellStatus.failed, CellStatus.skipped]),
            Output.error_class.is_(None)))
        return {
            "status": run.status, "total": run.total, "rows": sums[0], "keys": keys,
            "spent": run.spent_micros, "reserved": run.reserved_micros,
            "outputs_cost": int(sums[1]), "held": int(sums[2]),
            "targets_spent": int(targets[0] or 0),
            "targets_counts": (int(targets[1] or 0), int(targets[2] or 0),
                               int(targets[3] or 0)),
            "project_spent": project.spent_micros, "project_reserved": project.reserved_micros,
            "budget": run.budget_micros,
            "counts": (run.succeeded, run.failed, run.skipped),
            "rows_by_status": counts, "unclassified": unclassified,
        }


def assert_balanced(b: dict[str, Any]) -> None:
    """Exactly one row per planned cell; counters equal what the rows say; nothing reserved
    once the run is over; every failed or skipped cell says why."""
    assert b["rows"] == b["keys"] == b["total"], b
    rows = b["rows_by_status"]
    assert b["counts"] == (rows.get("succeeded", 0), rows.get("failed", 0),
                           rows.get("skipped", 0)), b
    assert b["targets_counts"] == b["counts"], b
    assert b["spent"] == b["outputs_cost"] == b["targets_spent"], b
    assert b["reserved"] == b["held"] == 0, b
    assert b["unclassified"] == 0, b
    if b["budget"] is not None:
        assert b["spent"] <= b["budget"], b
