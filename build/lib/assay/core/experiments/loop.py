"""The iteration loop (edison §9.1): an iteration is an engine run of the current prompt
version x the experiment's targets x its judges; when the run ends, a job aggregates,
checks the stop rules and asks the refiner; a person reviews; approval starts the next.

States of an iteration: executing (the run: model calls, and the judges scoring each
output as it lands, DESIGN §4 "Scoring in the stream") -> judging (only with a pairwise
judge, from the second iteration: pairwise.py) -> aggregating -> refining ->
awaiting_review -> approved (the next iteration starts) | completed (a stop rule ended the
experiment) | failed | cancelled; `paused` holds any phase where it is. A rejected
suggestion sends the iteration back to refining, the reason fed to the refiner (a bounded
number in a row, `stop.max_rejections`, ends the experiment instead).

Every move is a conditional UPDATE on the status it leaves, so a job repeated after a crash
(or two at once) moves an iteration once. Work that must happen after the transaction
(enqueueing a run's shards, the next step's job) is handed to a dispatcher after commit:
core imports no queue; the app and the workers install one (jobs/experiments.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import event, func, select, update
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.models import DatasetVersion
from assay.core.errors import Conflict, DomainError
from assay.core.experiments.models import (
    EXPERIMENT_ENDED,
    Experiment,
    ExperimentStatus,
    Iteration,
    IterationStatus,
    StopReason,
)
from assay.core.projects.models import Project
from assay.core.runs.models import Run
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run

I = IterationStatus  # noqa: E741
OPEN = frozenset({I.executing, I.judging, I.aggregating, I.refining, I.awaiting_review})
ENDED = frozenset({I.approved, I.completed, I.failed, I.cancelled, I.rejected})
RUN, ADVANCE = "run", "advance"  # what the dispatcher is asked to do, with an id

Dispatcher = Callable[[str, int], None]
_dispatcher: Dispatcher | None = None

class LoopError(DomainError):
    status, code = 409, "ITERATION_STATE"


class BudgetReached(Conflict):
    code = "BUDGET_REACHED"


def set_dispatcher(dispatcher: Dispatcher | None) -> None:
    global _dispatcher
    _dispatcher = dispatcher


def has_dispatcher() -> bool:
    return _dispatcher is not None


def dispatch(kind: str, ident: int) -> None:
    """Ask now (outside any transaction of ours)."""
    if _dispatcher is not None:
        _dispatcher(kind, ident)


def _flush_dispatches(session: Session) -> None:
    pending = session.info.pop("experiment_dispatch", [])
    if _dispatcher is None:
        return  # no queue here (a script): the reaper starts pending runs and stale steps
    for kind, ident in pending:
        _dispatcher(kind, ident)


def after_commit(session: Session, kind: str, ident: int) -> None:
    """Ask the dispatcher for `kind` of `ident` once this transaction commits."""
    pending = session.info.setdefault("experiment_dispatch", [])
    pending.append((kind, ident))
    if not session.info.get("experiment_listening"):
        session.info["experiment_listening"] = True
        event.listen(session, "after_commit", _flush_dispatches)
        event.listen(session, "after_rollback",
                     lambda s: s.info.pop("experiment_dispatch", None))


def move(session: Session, iteration_id: int, to: IterationStatus,
         sources: frozenset[IterationStatus] | set[IterationStatus], *,
         unpaused: bool = False, **values: Any) -> bool:
    """Move the iteration when its status is one of `sources` (and, with `unpaused`, it is
    not paused); True when this call moved it. The caller commits."""
    stmt = update(Iteration).where(Iteration.id == iteration_id,
                                   Iteration.status.in_([s.value for s in sources]))
    if unpaused:
        stmt = stmt.where(Iteration.paused.is_(False))
    moved = session.execute(stmt.values(status=to, phase_started_at=utcnow(), **values)
                            .execution_options(synchronize_session=False))
    if not getattr(moved, "rowcount", 0):
        return False
    loaded = session.identity_map.get(session.identity_key(Iteration, iteration_id))
    if loaded is not None:
        session.expire(loaded)
    return True


# --- budget ---------------------------------------------------------------------------------


def room(experiment: Experiment) -> int | None:
    """What the cap leaves for new spending (None: no cap)."""
    if experiment.budget_micros is None:
        return None
    return experiment.budget_micros - experiment.spent_micros - experiment.reserved_micros


def tokens_used(experiment: Experiment) -> int:
    return experiment.tokens_in + experiment.tokens_out


# --- starting an iteration ------------------------------------------------------------------


def begin(session: Session, experiment: Experiment, actor: User | None = None) -> Iteration:
    """Iteration 1 of a started experiment, its run planned; the run's shards are enqueued
    once the caller commits."""
    if experiment.current_prompt_version_id is None:
        raise LoopError("The experiment has no prompt version to run")
    return start_iteration(session, experiment, actor, experiment.current_prompt_version_id)


def start_iteration(session: Session, experiment: Experiment, actor: User | None,
                    prompt_version_id: int) -> Iteration:
    left = room(experiment)
    if left is not None and left <= 0:
        raise BudgetReached("The experiment's budget is spent")
    number = (session.scalar(select(func.max(Iteration.number)).where(
        Iteration.experiment_id == experiment.id)) or 0) + 1
    project = session.get(Project, experiment.project_id)
    version = session.get(DatasetVersion, experiment.dataset_version_id)
    if project is None or version is None:
        raise LoopError("The experiment's project or dataset version is gone")
    targets = tuple(TargetSpec(model_id=t["model_id"], params=dict(t.get("params") or {}),
                               prompt_version_id=prompt_version_id, grid=t.get("grid") or None)
                    for t in (experiment.config.get("models") or {}).get("targets") or [])
    run_cfg = experiment.config.get("run") or {}
    spec = RunSpec(dataset_id=version.dataset_id, dataset_version_id=version.id,
                   targets=targets, name=f"{experiment.name} · iteration {number}"[:200],
                   scorer_ids=tuple(_run_scorers(session, experiment)), budget_micros=left,
                   alert_threshold=experiment.alert_threshold,
                   concurrency=run_cfg.get("concurrency"), shards=run_cfg.get("shards"),
                   cache=bool(run_cfg.get("cache", True)))
    run = plan_run(session, actor, project, spec)
    iteration = Iteration(experiment_id=experiment.id, number=number,
                          status=I.executing, prompt_version_id=prompt_version_id,
                          dataset_version_id=version.id, run_id=run.id,
                          phase_started_at=utcnow())
    session.add(iteration)
    experiment.current_prompt_version_id = prompt_version_id
    session.flush()
    audit.record(session, actor, "iteration.started", "experiment", experiment.id,
                 experiment.project_id, {"iteration": number, "run_id": run.id,
                                         "prompt_version_id": prompt_version_id})
    after_commit(session, RUN, run.id)
    return iteration


def _run_scorers(session: Session, experiment: Experiment) -> list[int]:
    """The experiment's pointwise and safety scorers (a pairwise judge compares two runs:
    it is not applied inside one)."""
    from assay.core.scoring.models import ScorerConfig

    kinds = dict(session.execute(select(ScorerConfig.id, ScorerConfig.kind).where(
        ScorerConfig.id.in_(experiment.scorer_ids or []))).all())
    return [i for i in experiment.scorer_ids or [] if kinds.get(i) != "pairwise_judge"]


# --- the run ended --------------------------------------------------------------------------


def iteration_of_run(session: Session, run_id: int) -> Iteration | None:
    return session.scalar(select(Iteration).where(Iteration.run_id == run_id))


def run_finished(session: Session, run_id: int) -> int | None:
    """The hook a run's finalisation calls: the iteration it executes moves on to judging
    (pairwise vs the previous iteration) or aggregating; returns its id (for the caller to
    enqueue the step), else None."""
    iteration = iteration_of_run(session, run_id)
    if iteration is None or iteration.status != I.executing:
        return None
    run = session.get(Run, run_id)
    if run is None:
        return None
    if run.status == "cancelled":  # the run itself was cancelled (from the runs page)
        experiment = session.get(Experiment, iteration.experiment_id)
        if experiment is not None:
            finish(session, experiment, iteration, StopReason.cancelled,
                   f"The iteration's run was cancelled: {run.error or ''}".strip(),
                   ExperimentStatus.cancelled)
        session.commit()
        return None
    if run.status not in ("completed", "partial", "failed", "budget_exceeded"):
        return None
    from assay.core.experiments import pairwise  # it moves iterations with this module

    experiment = session.get(Experiment, iteration.experiment_id)
    after = I.judging if experiment is not None and pairwise.applies(
        session, experiment, iteration, run) else I.aggregating
    if move(session, iteration.id, after, {I.executing}):
        _collect_run_spend(session, iteration, run)
        session.commit()
        return iteration.id
    session.commit()
    return None


def _collect_run_spend(session: Session, iteration: Iteration, run: Run) -> None:
    """The run's spend becomes the experiment's execution and judging spend (once: this
    runs in the transaction that leaves executing)."""
    judging = run.judge_spent_micros
    execution = run.spent_micros - judging
    session.execute(update(Iteration).where(Iteration.id == iteration.id).values(
        execution_micros=execution, judging_micros=judging, tokens_in=run.tokens_in,
        tokens_out=run.tokens_out).execution_options(synchronize_session=False))
    session.execute(update(Experiment).where(Experiment.id == iteration.experiment_id).values(
        execution_micros=Experiment.execution_micros + execution,
        judging_micros=Experiment.judging_micros + judging,
        tokens_in=Experiment.tokens_in + run.tokens_in,
        tokens_out=Experiment.tokens_out + run.tokens_out,
    ).execution_options(synchronize_session=False))


# --- ending ---------------------------------------------------------------------------------


def finish(session: Session, experiment: Experiment, iteration: Iteration | None,
           reason: StopReason, detail: str, status: ExperimentStatus = ExperimentStatus.completed,
           actor: User | None = None) -> None:
    """End the experiment with its reason (and the iteration, when it is still open)."""
    if iteration is not None:
        final = {ExperimentStatus.completed: I.completed, ExperimentStatus.failed: I.failed,
                 ExperimentStatus.cancelled: I.cancelled}[status]
        move(session, iteration.id, final, OPEN, finished_at=utcnow())
    moved = session.execute(update(Experiment).where(
        Experiment.id == experiment.id,
        Experiment.status.not_in([s.value for s in EXPERIMENT_ENDED])).values(
        status=status, stop_reason=reason, stop_detail=detail, finished_at=utcnow())
        .execution_options(synchronize_session=False))
    session.expire(experiment)
    if getattr(moved, "rowcount", 0):
        audit.record(session, actor, f"experiment.{status}", "experiment", experiment.id,
                     experiment.project_id, {"stop_reason": str(reason), "detail": detail})


def stop_rule(session: Session, experiment: Experiment, iteration: Iteration
              ) -> tuple[StopReason, str] | None:
    """The stop rule the aggregated iteration meets (FR-IL-001), or None to go on."""
    stop = experiment.config.get("stop") or {}
    session.refresh(experiment)
    max_iterations = stop.get("max_iterations")
    if max_iterations and iteration.number >= int(max_iterations):
        return StopReason.max_iterations, f"Maximum iterations reached ({max_iterations})"
    left = room(experiment)
    if left is not None and left <= 0:
        return StopReason.budget, (f"Budget reached: {experiment.spent_micros} of "
                                   f"{experiment.budget_micros} micro-dollars spent")
    if experiment.max_tokens and tokens_used(experiment) >= experiment.max_tokens:
        return StopReason.max_tokens, (f"Token limit reached: {tokens_used(experiment)} of "
                                       f"{experiment.max_tokens}")
    window = int(stop.get("convergence_window") or 0)
    min_delta = float(stop.get("min_delta") or 0)
    if window >= 2 and iteration.composite is not None:
        recent = [c for c in session.scalars(select(Iteration.composite).where(
            Iteration.experiment_id == experiment.id, Iteration.number <= iteration.number,
            Iteration.composite.is_not(None)).order_by(Iteration.number.desc())
            .limit(window)) if c is not None]
        if len(recent) >= window:
            best_before = max(recent[1:])
            gain = (recent[0] - best_before) / best_before if best_before else recent[0]
            if gain < min_delta:
                return StopReason.converged, (
                    f"Converged: improvement {gain:+.1%} < {min_delta:.1%} over the last "
                    f"{window} iterations")
    return None
