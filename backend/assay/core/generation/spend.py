"""What a finished generation job cost, kept in the database: the job itself lives in Redis
and expires, but its spend is the project's (its budget counter and its cost report)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from assay.core import ledger
from assay.core.projects.models import Project

KIND = "generation"


def record(session: Session, state: dict[str, Any]) -> int:
    """Add the concluded job's cost and tokens to its project (the caller commits once per
    job). An unpriced model's calls cost nothing known: their tokens still count. Returns
    the micro-dollars charged."""
    spent = int(state.get("cost_micros") or 0)
    tokens_in, tokens_out = int(state.get("tokens_in") or 0), int(state.get("tokens_out") or 0)
    calls = int(state.get("batches_done") or 0)
    if not (spent or tokens_in or tokens_out or calls):
        return 0
    finished = state.get("finished_at")
    day = (datetime.fromisoformat(finished) if finished else datetime.now(UTC)).date()
    project_id = int(state["project_id"])
    tab = ledger.Tab()
    tab.add(state.get("model_id"), calls, spent, tokens_in, tokens_out)
    ledger.record(session, project_id, KIND, tab, day=day)
    if spent:
        session.execute(update(Project).where(Project.id == project_id)
                        .values(spent_micros=Project.spent_micros + spent))
    return spent
