"""The budget of judging outputs that are already recorded (the scoring job: trace and
judge-mode runs, scorers added later): reserve a page's most judge cost against the run's
and project's caps, then settle what the judges cost with the page's scores, or release.

The shard path reserves judges with the call they judge (service.claim_cells); this is the
same promise for outputs no call produces: spend + reserved never exceeds a cap. What the
job holds is also on the run (`scoring_reserved_micros`) under a lease, so that the reaper
gives it back when the job dies between reserving and settling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.orm import Session

from assay.core import ledger
from assay.core.base import utcnow
from assay.core.projects.models import Project
from assay.core.runs import budget
from assay.core.runs.locks import for_update, lock_run
from assay.core.runs.models import Output, Run
from assay.core.scoring.apply import CellScore

# Long enough for a page of judge calls with their retries; a live job renews it per page.
LEASE = timedelta(minutes=15)


def judge_cost(scores: Sequence[CellScore]) -> int | None:
    """What the judges behind `scores` cost (None: no judge was called)."""
    costs = [usage.get("cost_micros") for usage in (
        score.result.details.get("usage") for score in scores) if usage]
    return sum(c or 0 for c in costs) if costs else None


def tab_of(scores: Sequence[CellScore]) -> ledger.Tab:
    """What the judges behind `scores` cost, by judge model."""
    return ledger.Tab.of_usages(score.result.details.get("usage") for score in scores)


def record_judges(session: Session, project_id: int, run_id: int, purpose: str,
                  scores: Sequence[CellScore], day: date | None = None,
                  unscored: Sequence[ledger.Tab] = ()) -> None:
    """The judge calls behind `scores`, and those `unscored` (outputs a stop cut), onto
    the ledger, for the run and by judge model."""
    tab = tab_of(scores)
    for cut in unscored:
        tab.merge(cut)
    if tab.by_model:
        ledger.record(session, project_id, purpose, tab, run_id, day)


def purpose_of(session: Session, run_id: int) -> str:
    """A run's judges are "judges", a judge-mode run's "judge_mode"."""
    from assay.core.scoring.judge_mode import MODE

    settings = session.scalar(select(Run.settings).where(Run.id == run_id)) or {}
    return "judge_mode" if settings.get("mode") == MODE else "judges"


def _project_id(session: Session, run_id: int) -> int:
    return int(session.scalar(select(Run.project_id).where(Run.id == run_id)) or 0)


def _move(session: Session, run_id: int, reserved: int, spent: int = 0) -> None:
    """Add `reserved` and `spent` to the run's and project's counters (the run is locked)."""
    if not reserved and not spent:
        return
    session.execute(update(Run).where(Run.id == run_id).values(
        reserved_micros=Run.reserved_micros + reserved, spent_micros=Run.spent_micros + spent,
        judge_spent_micros=Run.judge_spent_micros + spent))
    session.execute(update(Project).where(Project.id == _project_id(session, run_id)).values(
        reserved_micros=Project.reserved_micros + reserved,
        spent_micros=Project.spent_micros + spent))


def _held(session: Session, run_id: int, amount: int) -> int:
    """Take back up to `amount` of what the run's scoring jobs hold (the run is locked): no
    more than is still held, since the reaper may have released it meanwhile."""
    held = int(session.scalar(select(Run.scoring_reserved_micros).where(Run.id == run_id))
               or 0)
    taken = min(amount, held)
    if taken:
        session.execute(update(Run).where(Run.id == run_id).values(
            scoring_reserved_micros=Run.scoring_reserved_micros - taken))
    return taken


def reserve(session: Session, run_id: int, amounts: Sequence[int]) -> tuple[int, int]:
    """Reserve the longest prefix of `amounts` the caps allow, and commit. Returns (how many
    fit, micro-dollars reserved). Without a cap, all fit and nothing is reserved."""
    lock_run(session, run_id)
    row = session.execute(select(Run.budget_micros, Run.spent_micros, Run.reserved_micros,
                                 Run.project_id).where(Run.id == run_id)).one()
    project = session.execute(for_update(session, select(
        Project.budget_micros, Project.spent_micros, Project.reserved_micros)
        .where(Project.id == row.project_id))).one()
    space = budget.room([(row.budget_micros, row.spent_micros, row.reserved_micros),
                         (project.budget_micros, project.spent_micros,
                          project.reserved_micros)])
    if space.now is None:
        session.commit()
        return len(amounts), 0
    fit = total = 0
    for amount in amounts:
        if not space.fits(total + amount):
            break
        fit, total = fit + 1, total + amount
    _move(session, run_id, total)
    if total:
        session.execute(update(Run).where(Run.id == run_id).values(
            scoring_reserved_micros=Run.scoring_reserved_micros + total,
            scoring_lease_until=utcnow() + LEASE))
    session.commit()
    return fit, total


def settle(session: Session, run_id: int, reserved: int, costs: Mapping[int, int],
           scores: Sequence[CellScore] = (), cut: ledger.Tab | None = None) -> None:
    """Release `reserved` and charge what each output's judges cost (`costs`: output id ->
    micro-dollars) to it, the run and the project, in the caller's transaction (the one that
    writes the scores); `scores` (theirs) put the calls on the ledger by judge model, and
    `cut` the judge calls that answered for outputs a stop left unscored (their costs are
    in `costs` too)."""
    lock_run(session, run_id)
    record_judges(session, _project_id(session, run_id), run_id, purpose_of(session, run_id),
                  scores, unscored=[cut] if cut is not None else [])
    if costs:
        session.connection().execute(
            update(Output.__table__).where(Output.id == bindparam("oid"))  # type: ignore[arg-type]
            .values(judge_cost_micros=func.coalesce(Output.judge_cost_micros, 0)
                    + bindparam("cost")),
            [{"oid": oid, "cost": cost} for oid, cost in costs.items()])
    _move(session, run_id, -_held(session, run_id, reserved), sum(costs.values()))


def charge(session: Session, run_id: int, reserved: int, purpose: str,
           tab: ledger.Tab) -> None:
    """Release `reserved` and charge calls made for the run that judge no one output (the
    pairwise comparisons of its targets, or with a base run) to the run, its project and
    the ledger, in the caller's transaction."""
    lock_run(session, run_id)
    project_id = _project_id(session, run_id)
    _move(session, run_id, -_held(session, run_id, reserved), tab.spent_micros)
    ledger.record(session, project_id, purpose, tab, run_id)


def release(session: Session, run_id: int, reserved: int) -> None:
    """Give back a reservation whose judging never landed, and commit."""
    lock_run(session, run_id)
    _move(session, run_id, -_held(session, run_id, reserved))
    session.commit()


def release_expired(session: Session) -> list[int]:
    """The reaper's part: give back what dead scoring jobs held (their lease expired).
    Returns the runs released; the caller commits."""
    now = utcnow()
    expired = (Run.scoring_reserved_micros > 0, Run.scoring_lease_until < now)
    runs = list(session.scalars(select(Run.id).where(*expired)))
    for run_id in runs:
        lock_run(session, run_id)  # then looked at again: a job may have renewed meanwhile
        held = session.scalar(select(Run.scoring_reserved_micros).where(Run.id == run_id,
                                                                       *expired))
        if held:
            _move(session, run_id, -_held(session, run_id, held))
    return runs
