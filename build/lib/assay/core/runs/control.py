"""Run control: the one table of status transitions, and pause, resume, cancel, retry-failed.

Every status change goes through `transition`, a conditional UPDATE ... WHERE status IN
(the allowed sources): of two concurrent requests only one moves the row, the other sees
rowcount 0 and is refused. The callers here audit and flush; the API view commits, then
enqueues shard runners (resume, retry) and publishes a `run.status` event.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.errors import Conflict, Invalid, NotFound
from assay.core.projects.models import Project
from assay.core.reports import rollups
from assay.core.runs import progress
from assay.core.runs.locks import lock_run
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget

S = RunStatus

# Where each status may go. completed and cancelled are terminal; partial, failed and
# budget_exceeded may run again (retry-failed, or resume once the cap was raised).
TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    S.pending: frozenset({S.running, S.paused, S.cancelled}),
    S.running: frozenset({S.paused, S.completed, S.partial, S.failed, S.cancelled,
                          S.budget_exceeded}),
    S.paused: frozenset({S.running, S.cancelled}),
    S.partial: frozenset({S.running}),
    S.failed: frozenset({S.running}),
    S.budget_exceeded: frozenset({S.running}),
    S.completed: frozenset(),
    S.cancelled: frozenset(),
}

# The sources each control action accepts (a subset of the table's).
PAUSABLE = frozenset({S.pending, S.running})
RESUMABLE = frozenset({S.paused, S.budget_exceeded})
CANCELLABLE = frozenset({S.pending, S.running, S.paused})
RETRYABLE = frozenset({S.partial, S.failed, S.budget_exceeded})

BUDGET_SKIPPED = "budget_exceeded"  # error_class of cells skipped when the budget ran out


class InvalidTransition(Conflict):
    code = "INVALID_TRANSITION"

    def __init__(self, current: str, to: str, action: str = "change"):
        super().__init__(f"Cannot {action} the run: it is {current}, and {current} -> {to} "
                         "is not an allowed transition", {"status": current, "to": to})


class BudgetSpent(Conflict):
    code = "BUDGET_SPENT"


def allowed_sources(to: RunStatus) -> frozenset[RunStatus]:
    return frozenset(source for source, targets in TRANSITIONS.items() if to in targets)


def can_move(source: str, to: str) -> bool:
    return RunStatus(to) in TRANSITIONS[RunStatus(source)]


def transition(session: Session, run_id: int, to: RunStatus,
               sources: Iterable[RunStatus] | None = None, **values: Any) -> bool:
    """Move the run to `to` when its status is one of `sources` (default: every status the
    table allows to reach `to`), setting `values` too; True when this call moved it. The
    caller commits."""
    allowed = allowed_sources(to)
    chosen = allowed if sources is None else frozenset(sources)
    if not chosen <= allowed:
        raise ValueError(f"not in the transition table: {sorted(chosen - allowed)} -> {to}")
    moved = session.execute(
        update(Run).where(Run.id == run_id, Run.status.in_([s.value for s in chosen]))
        .values(status=to, **values).execution_options(synchronize_session=False))
    if not getattr(moved, "rowcount", 0):
        return False
    loaded = session.identity_map.get(session.identity_key(Run, run_id))
    if loaded is not None:
        session.expire(loaded)  # reloaded on next access, with the new status
    return True


def _current_status(session: Session, run_id: int) -> str:
    status = session.scalar(select(Run.status).where(Run.id == run_id))
    if status is None:
        raise NotFound("Run not found")
    return str(status)


def _move(session: Session, run: Run, to: RunStatus, sources: frozenset[RunStatus],
          action: str, **values: Any) -> str:
    """Transition or raise InvalidTransition; returns the status the run came from."""
    for _ in range(5):  # the status may move between our read and our update: read again
        before = _current_status(session, run.id)
        if RunStatus(before) not in sources:
            break
        if transition(session, run.id, to, sources=[RunStatus(before)], **values):
            return before
    raise InvalidTransition(before, to.value, action)


def _audit(session: Session, actor: User | None, action: str, run: Run, before: str,
           **data: Any) -> None:
    audit.record(session, actor, action, "run", run.id, run.project_id,
                 {"from": before, "to": run.status, **data})


def has_budget_room(session: Session, run: Run) -> bool:
    """True when neither the run's cap nor its project's is used up (spent + reserved)."""
    if run.budget_micros is not None and \
            run.spent_micros + run.reserved_micros >= run.budget_micros:
        return False
    project = session.get(Project, run.project_id)
    return not (project is not None and project.budget_micros is not None
                and project.spent_micros + project.reserved_micros >= project.budget_micros)


def _require_room(session: Session, run: Run) -> None:
    if not has_budget_room(session, run):
        raise BudgetSpent("The budget of this run or its project is spent: raise the cap "
                          "first")


def reopen_cells(session: Session, run_id: int, statuses: Iterable[CellStatus],
                 error_class: str | None = None) -> int:
    """Failed or skipped cells back to pending, error fields cleared, with the run's and
    targets' failed/skipped counters moved down in the same transaction (one UPDATE ...
    RETURNING per status, as skip_open_cells does). `error_class`: only the cells that ended
    with that class. Returns how many were reopened; the caller commits."""
    lock_run(session, run_id)
    per_target: Counter[tuple[int, str]] = Counter()
    for status in statuses:
        if status not in (CellStatus.failed, CellStatus.skipped):
            raise ValueError(f"only failed or skipped cells reopen, not {status}")
        if status == CellStatus.failed:  # no longer finished: out of the report rollups
            rollups.remove_reopened(session, [Output.run_id == run_id] + (
                [] if error_class is None else [Output.error_class == error_class]))
        stmt = (update(Output).where(Output.run_id == run_id, Output.status == status.value)
                .values(status=CellStatus.pending, error_class=None, error_message=None,
                        text=None, finished_at=None, lease_owner=None, lease_until=None)
                .returning(Output.target_id)
                .execution_options(synchronize_session=False))
        if error_class is not None:
            stmt = stmt.where(Output.error_class == error_class)
        for (target_id,) in session.execute(stmt):
            per_target[(target_id, status.value)] += 1
    if not per_target:
        return 0
    moved = {"failed": 0, "skipped": 0}  # counter column -> cells reopened
    for (target_id, was), count in per_target.items():
        column = "failed" if was == CellStatus.failed else "skipped"
        moved[column] += count
        session.execute(update(RunTarget).where(RunTarget.id == target_id)
                        .values({column: getattr(RunTarget, column) - count})
                        .execution_options(synchronize_session=False))
    session.execute(update(Run).where(Run.id == run_id)
                    .values(failed=Run.failed - moved["failed"],
                            skipped=Run.skipped - moved["skipped"])
                    .execution_options(synchronize_session=False))
    return sum(per_target.values())


# --- the control actions --------------------------------------------------------------------


def pause(session: Session, actor: User | None, run: Run) -> Run:
    """pending|running -> paused. Shards stop claiming (claims need a running run); cells in
    flight finish and are recorded."""
    before = _move(session, run, S.paused, PAUSABLE, "pause")
    _audit(session, actor, "run.paused", run, before)
    return run


def resume(session: Session, actor: User | None, run: Run) -> Run:
    """paused -> running; or budget_exceeded -> running once the run's and its project's caps
    leave room again, with the cells skipped for budget back to pending. The caller enqueues
    shard runners."""
    before = _current_status(session, run.id)
    reopened = 0
    if before == S.budget_exceeded:
        _require_room(session, run)
        _move(session, run, S.running, frozenset({S.budget_exceeded}), "resume",
              finished_at=None, error=None)
        reopened = reopen_cells(session, run.id, [CellStatus.skipped], BUDGET_SKIPPED)
    else:
        before = _move(session, run, S.running, frozenset({S.paused}), "resume",
                       started_at=func.coalesce(Run.started_at, utcnow()))
    _audit(session, actor, "run.resumed", run, before, reopened=reopened)
    session.refresh(run)
    return run


def cancel(session: Session, actor: User | None, run: Run) -> Run:
    """pending|running|paused -> cancelled: what is left is skipped, what is done is kept,
    cells in flight finish and are recorded."""
    from assay.core.runs import service  # service imports this module

    who = actor.email if actor else "the system"
    message = f"Cancelled by {who}"
    before = _move(session, run, S.cancelled, CANCELLABLE, "cancel", finished_at=utcnow(),
                   error=message)
    skipped = service.skip_open_cells(session, run.id, "cancelled", message)
    _audit(session, actor, "run.cancelled", run, before, skipped=skipped)
    session.refresh(run)
    return run


def retry_failed(session: Session, actor: User | None, run: Run) -> Run:
    """partial|failed|budget_exceeded -> running, with the failed and skipped cells back to
    pending (error fields cleared, counters moved down). The caller enqueues shard runners."""
    before = _current_status(session, run.id)
    if RunStatus(before) not in RETRYABLE:
        raise InvalidTransition(before, S.running.value, "retry")
    _require_room(session, run)
    before = _move(session, run, S.running, frozenset({RunStatus(before)}),
                   "retry", finished_at=None, error=None)
    reopened = reopen_cells(session, run.id, [CellStatus.failed, CellStatus.skipped])
    _audit(session, actor, "run.retried", run, before, reopened=reopened)
    session.refresh(run)
    return run


def set_budget(session: Session, actor: User | None, run: Run, budget_micros: int | None,
               alert_threshold: float | None = None) -> Run:
    """Change a run's cap (None: no cap) or alert threshold, e.g. to resume a run stopped
    for budget. A cap below what the run has spent and holds is refused: it could not
    be kept. The run row is locked, so no claim reserves in between."""
    locked = session.execute(select(Run.spent_micros, Run.reserved_micros, Run.budget_micros,
                                    Run.alert_threshold).where(Run.id == run.id)
                             .with_for_update()).one()
    floor = locked.spent_micros + locked.reserved_micros
    if budget_micros is not None and budget_micros < floor:
        raise Invalid("The budget is below what the run has spent and holds",
                      {"json": {"budget_micros": [f"Must be at least {floor} micro-dollars"]}})
    values: dict[str, Any] = {"budget_micros": budget_micros}
    if alert_threshold is not None:
        values["alert_threshold"] = alert_threshold
    if budget_micros != locked.budget_micros or alert_threshold not in (
            None, locked.alert_threshold):
        values["alerted_at"] = None  # a new cap gets its own alert
    session.execute(update(Run).where(Run.id == run.id).values(**values)
                    .execution_options(synchronize_session=False))
    audit.record(session, actor, "run.budget_changed", "run", run.id, run.project_id,
                 {"from": locked.budget_micros, "to": budget_micros,
                  "alert_threshold": alert_threshold})
    session.refresh(run)
    return run


ACTIONS = {"pause": pause, "resume": resume, "cancel": cancel, "retry-failed": retry_failed}
STARTS_SHARDS = frozenset({"resume", "retry-failed"})


def status_payload(session: Session, run_id: int) -> dict[str, Any]:
    """The data of a `run.status` event: the run's progress snapshot."""
    return progress.snapshot(session, run_id)
