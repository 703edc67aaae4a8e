"""What a generation job may cost, held against the project's cap before its first batch is
sent, and what it did cost, kept in the database: the job itself lives in Redis and
expires, but its spend is the project's (its budget counter and the ledger)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from assay.core import ledger
from assay.core.experiments import spend as holds
from assay.providers.pricing import cost_micros

if TYPE_CHECKING:
    from assay.core.generation.service import Call

WHAT = "this generation"
JOB_TIMEOUT_S = 3600  # a generation job's own (RQ's job_timeout): it is killed by then
# the job's hold outlives no job: a dead worker's is given back by the reaper after this
LEASE = timedelta(seconds=JOB_TIMEOUT_S + 300)


def most(call: Call) -> int:
    """Every batch writing its full output cap (an unpriced model: nothing known), or the
    job's own budget when less: run_batches sends no batch that could pass it."""
    total = sum(cost_micros(b.input_tokens, b.max_tokens, call.price_in, call.price_out) or 0
                for b in call.batches)
    return total if call.budget is None else min(total, call.budget)


def check(session: Session, project_id: int, high_micros: int | None) -> None:
    """Refuse a job the project's cap cannot cover before it is queued (BudgetExceeded)."""
    holds.check(session, project_id, high_micros or 0, WHAT)


def hold(session: Session, state: dict[str, Any], call: Call) -> holds.Hold:
    """Hold the job's most cost against the project's cap and commit; BudgetExceeded (and
    nothing sent) when the cap cannot cover it."""
    try:
        held = holds.reserve(session, int(state["project_id"]), None, most(call), WHAT,
                             lease=LEASE)
    except holds.BudgetExceeded:
        session.rollback()
        raise
    session.commit()
    return held


def record(session: Session, state: dict[str, Any], held: holds.Hold | None) -> int:
    """Release the job's hold and put what its calls cost (tokens of an unpriced model's
    calls included) on the ledger and the project's counter; the caller commits once per
    job. Returns the micro-dollars charged."""
    spent = int(state.get("cost_micros") or 0)
    tokens_in, tokens_out = int(state.get("tokens_in") or 0), int(state.get("tokens_out") or 0)
    calls = int(state.get("calls", state.get("batches_done")) or 0)
    finished = state.get("finished_at")
    day = (datetime.fromisoformat(finished) if finished else datetime.now(UTC)).date()
    tab = ledger.Tab()
    if spent or tokens_in or tokens_out or calls:
        tab.add(state.get("model_id"), calls, spent, tokens_in, tokens_out)
    nothing = holds.Hold(int(state["project_id"]), None, 0)
    holds.settle(session, held or nothing, "generation", tab, day=day)
    return spent
