"""Budget holds for an experiment's own calls (AI assist, the refiner, the pairwise judge)
and for calls outside runs and experiments (EvalArena's judge runs, scorer trials,
critiques, generation jobs): the same reserve -> settle | release
protocol as a run's cells (core/runs/budget.py), against the project's cap and the
experiment's.

`reserve` locks the project row then the experiment row (the engine's order: a run's cells
lock the project last, and never an experiment) and adds the call's maximum cost to both
`reserved_micros` only when every cap still has room for it; `settle` swaps the hold for
the actual cost, charged to the project (its counter and its cost report) and to the
experiment's phase; `release` gives a hold back when no call was paid for.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal, cast

from sqlalchemy import CursorResult, delete, select, update
from sqlalchemy.orm import Session

from assay.core import ledger
from assay.core.base import utcnow
from assay.core.errors import Conflict
from assay.core.experiments.models import Experiment, Iteration
from assay.core.ledger.models import BudgetHold
from assay.core.projects.models import Project
from assay.core.runs import budget
from assay.core.runs.locks import for_update, lock_project

# what a hold pays for: an experiment's phases, or a call outside runs and experiments
Phase = Literal["assist", "refinement", "judging", "arena", "trial", "critique",
                "generation"]
_PHASE_COLUMN = {"assist": "assist_micros", "refinement": "refinement_micros",
                 "judging": "judging_micros"}  # arena: no experiment
_PURPOSE = {"assist": "assist", "refinement": "refinement", "judging": "pairwise_judge",
            "arena": "arena_judge", "trial": "scorer_trials",
            "critique": "critique", "generation": "generation"}  # on the ledger


class BudgetExceeded(Conflict):
    code = "BUDGET_EXCEEDED"


# The longest a hold may live unless its owner says otherwise: the in-request work that
# holds (scorer trials, critiques, AI assist, arena judge runs) has deadlines of a minute or
# two, an experiment step's job a lock of 10 minutes. Past it, the reaper gives it back.
LEASE = timedelta(minutes=15)


@dataclass(frozen=True)
class Hold:
    project_id: int
    experiment_id: int | None
    micros: int
    id: int | None = None  # its budget_holds row (None: nothing held, or no row kept)


def experiment_cap(experiment: Experiment) -> int | None:
    """The experiment's cap: its frozen budget once started, the wizard's while a draft."""
    if experiment.frozen_at is not None:
        return experiment.budget_micros
    value = (experiment.config.get("stop") or {}).get("max_budget_micros")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check(session: Session, project_id: int, micros: int, what: str = "this call") -> None:
    """BudgetExceeded now when the project's cap cannot cover `micros`: a request refuses
    work it queues before anything is stored (the worker takes the hold)."""
    project = session.execute(select(
        Project.budget_micros, Project.spent_micros, Project.reserved_micros)
        .where(Project.id == project_id)).one()
    _refuse(budget.room([(project.budget_micros, project.spent_micros,
                          project.reserved_micros)]), micros, what)


def _refuse(space: budget.Room, micros: int, what: str) -> None:
    if not space.fits(micros):
        raise BudgetExceeded(
            f"The budget has {max(space.now or 0, 0) / 1e6:.4f} USD left; {what} may cost "
            f"up to {micros / 1e6:.4f} USD", {"left_micros": max(space.now or 0, 0),
                                              "needed_micros": micros})


def reserve(session: Session, project_id: int, experiment_id: int | None, micros: int,
            what: str = "this call", lease: timedelta = LEASE) -> Hold:
    """Hold `micros` against the project's and the experiment's caps; BudgetExceeded (409)
    saying what is left when either cannot cover it. The hold is kept as a row until
    `lease` from now, the longest its owner may take to settle it. The caller commits (or
    rolls back on BudgetExceeded: on SQLite the lock is an open write transaction)."""
    lock_project(session, project_id)
    project = session.execute(select(
        Project.budget_micros, Project.spent_micros, Project.reserved_micros)
        .where(Project.id == project_id)).one()
    caps: list[tuple[int | None, int, int]] = [
        (project.budget_micros, project.spent_micros, project.reserved_micros)]
    if experiment_id is not None:
        experiment = session.scalar(for_update(session, select(Experiment).where(
            Experiment.id == experiment_id)).execution_options(populate_existing=True))
        if experiment is not None:
            caps.append((experiment_cap(experiment), experiment.spent_micros,
                         experiment.reserved_micros))
    _refuse(budget.room(caps), micros, what)
    if not micros:
        return Hold(project_id, experiment_id, 0)
    _move(session, project_id, experiment_id, reserved=micros)
    row = BudgetHold(project_id=project_id, experiment_id=experiment_id, micros=micros,
                     what=what[:100], lease_until=utcnow() + lease)
    session.add(row)
    session.flush()
    return Hold(project_id, experiment_id, micros, row.id)


def _take(session: Session, hold: Hold) -> int:
    """What of `hold` is still held, its row gone: 0 when the reaper gave it back already
    (its owner outlived its lease). The project is locked first, as the reaper does."""
    if hold.id is None:
        return hold.micros
    lock_project(session, hold.project_id)
    gone = session.execute(delete(BudgetHold).where(BudgetHold.id == hold.id)
                           .execution_options(synchronize_session=False))
    return hold.micros if cast(CursorResult[Any], gone).rowcount else 0


def settle(session: Session, hold: Hold, phase: Phase, tab: ledger.Tab,
           iteration_id: int | None = None, day: date | None = None) -> None:
    """The hold released and what the calls cost (`tab`, by model) charged: to the project,
    the ledger, the experiment's phase and, given, the iteration's phase. The caller
    commits."""
    spent = tab.spent_micros
    tokens_in, tokens_out = tab.tokens
    _move(session, hold.project_id, hold.experiment_id, reserved=-_take(session, hold),
          spent=spent)
    ledger.record(session, hold.project_id, _PURPOSE[phase], tab, day=day)
    if hold.experiment_id is not None:
        column = getattr(Experiment, _PHASE_COLUMN[phase])
        session.execute(update(Experiment).where(Experiment.id == hold.experiment_id).values(
            {column: column + spent, Experiment.tokens_in: Experiment.tokens_in + tokens_in,
             Experiment.tokens_out: Experiment.tokens_out + tokens_out})
            .execution_options(synchronize_session=False))
    if iteration_id is not None:
        column = getattr(Iteration, _PHASE_COLUMN[phase])
        session.execute(update(Iteration).where(Iteration.id == iteration_id).values(
            {column: column + spent}).execution_options(synchronize_session=False))


def release(session: Session, hold: Hold) -> None:
    """Give the hold back (the call was never paid for). The caller commits."""
    if hold.micros:
        _move(session, hold.project_id, hold.experiment_id, reserved=-_take(session, hold))


def release_orphaned(session: Session, experiment_id: int) -> int:
    """Give back every hold on the experiment (and its share of the project's): called when
    the job of its open iteration died mid-call (its holds can never be settled), while no
    other job works on the iteration. Returns what was released. The caller commits."""
    project_id = session.scalar(select(Experiment.project_id).where(
        Experiment.id == experiment_id))
    if project_id is None:
        return 0
    session.execute(for_update(session, select(Project.id).where(Project.id == project_id)))
    held = session.scalar(for_update(session, select(Experiment.reserved_micros).where(
        Experiment.id == experiment_id))) or 0
    session.execute(delete(BudgetHold).where(BudgetHold.experiment_id == experiment_id)
                    .execution_options(synchronize_session=False))
    if held > 0:
        _move(session, project_id, experiment_id, reserved=-held)
    return held


def release_expired(session: Session) -> dict[int, int]:
    """The reaper's part: give back every hold past its lease (its owner died between
    holding and settling: a worker killed mid-job, a server restarted mid-request), so the
    caps are free again. Project id -> micro-dollars released; the caller commits."""
    now = utcnow()
    expired = session.execute(select(BudgetHold.id, BudgetHold.project_id,
                                     BudgetHold.experiment_id, BudgetHold.micros)
                              .where(BudgetHold.lease_until < now)
                              .order_by(BudgetHold.project_id, BudgetHold.id)).all()
    released: dict[int, int] = {}
    for hold_id, project_id, experiment_id, micros in expired:
        # taken like an owner takes it: an owner settling meanwhile takes it first
        taken = _take(session, Hold(project_id, experiment_id, micros, hold_id))
        if taken:
            _move(session, project_id, experiment_id, reserved=-taken)
            released[project_id] = released.get(project_id, 0) + taken
    return released


def _move(session: Session, project_id: int, experiment_id: int | None, reserved: int,
          spent: int = 0) -> None:
    values: dict[Any, Any] = {Project.reserved_micros: Project.reserved_micros + reserved}
    if spent:
        values[Project.spent_micros] = Project.spent_micros + spent
    session.execute(update(Project).where(Project.id == project_id).values(values)
                    .execution_options(synchronize_session=False))
    if experiment_id is not None and reserved:
        session.execute(update(Experiment).where(Experiment.id == experiment_id).values(
            reserved_micros=Experiment.reserved_micros + reserved)
            .execution_options(synchronize_session=False))
