"""Keeping the report rollups (models.py) exact, and reading them.

Writers, each in the transaction that changes what the rollups sum:
- planning a trace run adds its recorded outputs (succeeded at once);
- `record_results` adds each batch of finished outputs (`add_finished`) and their scores
  (`add_scores`); the scoring job adds the scores it backfills (`add_scores`); what judges
  cost is on the ledger (`spend_days`, core/ledger/), by judge model;
- starting judge mode adds its questions (succeeded at once, free);
- reopening failed cells takes them out first (`remove_reopened`): they are no longer
  finished, and their next result is added when it lands;
- a reviewer's manual score recounts its one (version, model, case) (`recount_case`).
Succeeded outputs and their automatic scores never change afterwards, so nothing else can
move a sum. `spend_days` is the ledger of calls outside a run's cells, written by
`ledger.record` only and never recounted: its sources expire from Redis or leave no row.
Rows are upserted in key order, so two
transactions adding to the same (version, model, case) take its row locks in the same order
and cannot deadlock."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import (
    ColumnElement,
    Select,
    Table,
    case,
    delete,
    func,
    literal_column,
    select,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.orm import Session

from assay.core import bulk
from assay.core.datasets.models import Case
from assay.core.reports.models import ScoreCase, SpendDay, TargetDay, TargetLatency
from assay.core.reports.scope import Scope, run_conditions
from assay.core.reports.sql import day_of
from assay.core.runs.models import CellStatus, Output, Run, RunTarget
from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion

_DAYS = cast(Table, TargetDay.__table__)
_LATENCIES = cast(Table, TargetLatency.__table__)
_SCORE_CASES = cast(Table, ScoreCase.__table__)
_SPEND = cast(Table, SpendDay.__table__)


def _add(session: Session, table: Table, rows: Sequence[dict[str, Any]],
         keys: Sequence[str]) -> None:
    """Upsert `rows`, adding every non-key column to the row already there."""
    if not rows:
        return
    summed = [c for c in rows[0] if c not in keys]
    ordered = sorted(rows, key=lambda r: tuple(r[k] for k in keys))
    bulk.insert_rows(session.connection(), table, ordered, keys=keys, add=summed)


@dataclass
class Tally:
    """What finished outputs of one target add: to its counters, and to the rollups."""

    succeeded: int = 0
    failed: int = 0
    spent: int = 0  # the model calls' (the rollups' cost)
    judged: int = 0  # the judges' (the run's and project's counters only)
    released: int = 0  # reservations given back (the counters, not the rollups)
    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, ok: bool, cost: int | None, reserved: int, tokens_in: int | None,
            tokens_out: int | None, judged: int | None = None) -> None:
        self.succeeded += ok
        self.failed += not ok
        self.spent += cost or 0
        self.judged += judged or 0
        self.released += reserved
        self.tokens_in += tokens_in or 0
        self.tokens_out += tokens_out or 0


def add_finished(session: Session, day: date, targets: Mapping[int, Tally],
                 latencies: Counter[tuple[int, int]]) -> None:
    """Outputs that finished on `day`, per target; `latencies` counts (target, latency ms)
    of the succeeded uncached ones."""
    _add(session, _DAYS, [
        {"target_id": t, "day": day, "outputs": s.succeeded + s.failed,
         "succeeded": s.succeeded, "spent_micros": s.spent, "tokens_in": s.tokens_in,
         "tokens_out": s.tokens_out} for t, s in targets.items()],
        ("target_id", "day"))
    _add(session, _LATENCIES, [
        {"target_id": t, "day": day, "latency_ms": ms, "n": n}
        for (t, ms), n in latencies.items()], ("target_id", "day", "latency_ms"))


def _day(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value)[:10])


def remove_reopened(session: Session, reopened: Iterable[ColumnElement[bool]]) -> None:
    """Before failed outputs matching `reopened` go back to pending: take them out of
    their day's sums (failed outputs have no latency or scores in the rollups)."""
    day = day_of(session, Output.finished_at)
    rows = session.execute(
        select(Output.target_id, day, func.count(), func.coalesce(func.sum(Output.cost_micros), 0),
               func.coalesce(func.sum(Output.tokens_in), 0),
               func.coalesce(func.sum(Output.tokens_out), 0))
        .where(*reopened, Output.status == CellStatus.failed, Output.finished_at.is_not(None))
        .group_by(Output.target_id, day)).all()
    _add(session, _DAYS, [
        {"target_id": t, "day": _day(d), "outputs": -int(n), "succeeded": 0,
         "spent_micros": -int(spent), "tokens_in": -int(t_in), "tokens_out": -int(t_out)}
        for t, d, n, spent, t_in, t_out in rows], ("target_id", "day"))


def models_of(session: Session, target_ids: Iterable[int]) -> dict[int, int]:
    """target id -> its model key (the model id, 0 without one)."""
    ids = sorted(set(target_ids))
    if not ids:
        return {}
    return {t: m or 0 for t, m in session.execute(
        select(RunTarget.id, RunTarget.model_id).where(RunTarget.id.in_(ids)))}


_SCORE_KEY = ("scorer_id", "version_key", "model_key", "case_id")


def _versions_of(session: Session, version_ids: Iterable[int]) -> dict[int, int]:
    """scorer version id -> its scorer's id."""
    ids = sorted(set(version_ids))
    return dict(session.execute(select(ScorerVersion.id, ScorerVersion.scorer_id)
                                .where(ScorerVersion.id.in_(ids))).all()) if ids else {}


def add_scores(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """New score rows (as inserted) into their (scorer, version, model, case) sums, and
    into their scorer's pooled ones (version key 0)."""
    if not rows:
        return
    models = models_of(session, (r["target_id"] for r in rows))
    scorers = _versions_of(session, (r["scorer_version_id"] for r in rows))
    sums: dict[tuple[int, int, int, int], list[float]] = {}
    for r in rows:
        version, model = r["scorer_version_id"], models[r["target_id"]]
        for key in ((scorers[version], version, model, r["case_id"]),
                    (scorers[version], 0, model, r["case_id"])):
            found = sums.setdefault(key, [0.0, 0, 0, 0])
            if r.get("value") is not None:
                found[0] += r["value"]
                found[1] += 1
            if r.get("passed") is not None:
                found[2] += bool(r["passed"])
                found[3] += 1
    _add(session, _SCORE_CASES, [
        {"scorer_id": k[0], "version_key": k[1], "model_key": k[2], "case_id": k[3],
         "total": s[0], "n": int(s[1]), "passed": int(s[2]), "judged": int(s[3])}
        for k, s in sums.items()], _SCORE_KEY)


def _score_sums(model: ColumnElement[Any]) -> tuple[Any, ...]:
    """(model key, case, sum of values, values, passes, verdicts) of scores by `model`."""
    return (model, Score.case_id, func.coalesce(func.sum(Score.value), 0.0),
            func.count(Score.value), func.sum(case((Score.passed.is_(True), 1), else_=0)),
            func.count(Score.passed))


def recount_case(session: Session, version_id: int, target_id: int, case_id: int) -> None:
    """Recount one model's case for a version and for its scorer's pooled versions, from
    the scores (after a reviewer's change)."""
    session.flush()
    model = models_of(session, [target_id])[target_id]
    scorer = _versions_of(session, [version_id])[version_id]
    model_key = func.coalesce(RunTarget.model_id, 0)
    for version_key, versions in ((version_id, [version_id]), (0, select(ScorerVersion.id)
                                  .where(ScorerVersion.scorer_id == scorer))):
        session.execute(delete(ScoreCase).where(
            ScoreCase.scorer_id == scorer, ScoreCase.version_key == version_key,
            ScoreCase.model_key == model, ScoreCase.case_id == case_id))
        found = session.execute(
            select(*_score_sums(model_key)).join(RunTarget, RunTarget.id == Score.target_id)
            .where(Score.scorer_version_id.in_(versions), Score.case_id == case_id,
                   model_key == model).group_by(model_key, Score.case_id)).one_or_none()
        if found is not None:
            _, _, total, n, passed, judged = found
            session.add(ScoreCase(scorer_id=scorer, version_key=version_key, model_key=model,
                                  case_id=case_id, total=float(total), n=int(n),
                                  passed=int(passed or 0), judged=int(judged)))
    session.flush()


# --- reading ------------------------------------------------------------------------------


def day_conditions(scope: Scope, column: Any) -> list[ColumnElement[bool]]:
    """The whole UTC days of the scope's date range (both ends included)."""
    found: list[ColumnElement[bool]] = []
    if scope.start is not None:
        found.append(column >= scope.start.date())
    if scope.end is not None:
        found.append(column <= scope.end.date())
    return found


def day_number(value: Any) -> int:
    """A UTC day as kept in arrays of per-day sums (its proleptic ordinal)."""
    return _day(value).toordinal()


def in_days(scope: Scope, days: NDArray[np.int32]) -> NDArray[np.bool_]:
    """Which of these day numbers are the scope's whole UTC days (both ends included)."""
    found = np.ones(len(days), dtype=bool)
    if scope.start is not None:
        found &= days >= scope.start.date().toordinal()
    if scope.end is not None:
        found &= days <= scope.end.date().toordinal()
    return found


def _targets_in(scope: Scope, target_column: Any) -> list[ColumnElement[bool]]:
    return [target_column == RunTarget.id, RunTarget.run_id == Run.id, *run_conditions(scope)]


def runs_in_days(scope: Scope) -> Select[Any]:
    """The runs with outputs finished (succeeded or failed) in the scope's days."""
    return (select(RunTarget.run_id).join(TargetDay, TargetDay.target_id == RunTarget.id)
            .where(TargetDay.outputs > 0, *day_conditions(scope, TargetDay.day)))


def day_spans(session: Session, run_ids: Sequence[int]) -> dict[int, tuple[date, date]]:
    """run id -> the first and last UTC day its outputs finished."""
    if not run_ids:
        return {}
    return {run_id: (_day(first), _day(last)) for run_id, first, last in session.execute(
        select(RunTarget.run_id, func.min(TargetDay.day), func.max(TargetDay.day))
        .join(TargetDay, TargetDay.target_id == RunTarget.id)
        .where(RunTarget.run_id.in_(list(run_ids)), TargetDay.outputs > 0)
        .group_by(RunTarget.run_id))}


def whole_and_cut(session: Session, scope: Scope, runs: Sequence[Run]
                  ) -> tuple[list[Run], list[Run]]:
    """(the runs whose outputs all finished in the scope's days, the runs those days cut);
    without a range every run is whole."""
    if scope.start is None and scope.end is None:
        return list(runs), []
    spans = day_spans(session, [run.id for run in runs])
    whole = [run for run in runs if within(scope, spans.get(run.id))]
    return whole, [run for run in runs if run not in whole]


def across_days(session: Session, run_id: int) -> bool:
    """Whether the run's outputs finished on more than one UTC day: a date range can cut
    only such a run."""
    span = day_spans(session, [run_id]).get(run_id)
    return span is not None and span[0] != span[1]


def within(scope: Scope, span: tuple[date, date] | None) -> bool:
    """Every output of a run with this span finished in the scope's days: the run reads
    as it does without a range."""
    if span is None:
        return False
    first, last = span
    return ((scope.start is None or first >= scope.start.date())
            and (scope.end is None or last <= scope.end.date()))


def target_days(session: Session, scope: Scope
                ) -> list[tuple[int, date, int, int, int, int, int]]:
    """(target id, day, outputs, succeeded, spent, tokens in, tokens out) in scope."""
    return [(t, d, int(n), int(ok), int(spent), int(t_in), int(t_out))
            for t, d, n, ok, spent, t_in, t_out in session.execute(
        select(TargetDay.target_id, TargetDay.day, TargetDay.outputs, TargetDay.succeeded,
               TargetDay.spent_micros, TargetDay.tokens_in, TargetDay.tokens_out)
        .where(*_targets_in(scope, TargetDay.target_id),
               *day_conditions(scope, TargetDay.day)))]


def spend_days(session: Session, scope: Scope
               ) -> list[tuple[date, str, int, int, int, int, int, int]]:
    """(day, kind, model key, run key, calls, spent, tokens in, tokens out) of the ledger's
    calls outside runs' cells in the scope's days. With a dataset chosen: only those that
    served a run in scope (other calls belong to no run on it)."""
    conditions = [SpendDay.project_id == scope.project_id,
                  *day_conditions(scope, SpendDay.day)]
    if scope.dataset_id is not None:
        conditions.append(SpendDay.run_key.in_(select(Run.id).where(*run_conditions(scope))))
    return [(d, kind, int(m), int(r), int(calls), int(spent), int(t_in), int(t_out))
            for d, kind, m, r, calls, spent, t_in, t_out in session.execute(
        select(SpendDay.day, SpendDay.kind, SpendDay.model_key, SpendDay.run_key,
               SpendDay.calls, SpendDay.spent_micros, SpendDay.tokens_in,
               SpendDay.tokens_out).where(*conditions))]


def latency_counts(session: Session, scope: Scope) -> dict[int | None, list[tuple[int, int]]]:
    """model id -> [(latency ms, how many)] of the succeeded uncached outputs in scope."""
    rows = session.execute(
        select(RunTarget.model_id, TargetLatency.latency_ms, func.sum(TargetLatency.n))
        .where(*_targets_in(scope, TargetLatency.target_id),
               *day_conditions(scope, TargetLatency.day))
        .group_by(RunTarget.model_id, TargetLatency.latency_ms))
    grouped: dict[int | None, list[tuple[int, int]]] = {}
    for model, latency, n in rows:
        grouped.setdefault(model, []).append((int(latency), int(n)))
    return grouped


@dataclass
class ModelScores:
    """One model's scores in a report: how many values, passes and verdicts, and the mean
    of each case (ordered by case id: the bootstrap's input)."""

    values: int = 0
    passed: int = 0
    judged: int = 0
    case_means: list[float] | None = None


def model_scores(session: Session, scope: Scope, scorer_id: int, version_ids: Sequence[int]
                 ) -> dict[int | None, ModelScores]:
    """Per model, over every run of the project (on the scope's dataset): the version's
    rows when one is asked for, else the scorer's pooled ones, one index range in (model,
    case) order. PostgreSQL hands each model's case means over as one array (a row per
    case and model took twice as long to read into Python). A date range needs the scores
    themselves, run by run (range_scores.py)."""
    assert scope.start is None and scope.end is None
    conditions = [ScoreCase.scorer_id == scorer_id,
                  ScoreCase.version_key == (version_ids[0] if len(version_ids) == 1 else 0)]
    if scope.dataset_id is not None:
        conditions.append(ScoreCase.case_id.in_(
            select(Case.id).where(Case.dataset_id == scope.dataset_id)))
    connection = session.connection()
    found: dict[int | None, ModelScores] = {}
    if session.get_bind().dialect.name == "postgresql":
        means = func.array_agg(aggregate_order_by(ScoreCase.total / ScoreCase.n,
                                                  ScoreCase.case_id)
                               ).filter(ScoreCase.n > 0)
        for model, case_means, n, passed, judged in connection.execute(
                select(ScoreCase.model_key, means, func.sum(ScoreCase.n),
                       func.sum(ScoreCase.passed), func.sum(ScoreCase.judged))
                .where(*conditions).group_by(ScoreCase.model_key)):
            found[model or None] = ModelScores(int(n), int(passed), int(judged),
                                               list(case_means or []))
        return found
    for model, total, n, passed, judged in connection.execute(
            select(ScoreCase.model_key, ScoreCase.total, ScoreCase.n, ScoreCase.passed,
                   ScoreCase.judged).where(*conditions)
            .order_by(ScoreCase.model_key, ScoreCase.case_id)):
        scores = found.get(model or None)
        if scores is None:
            scores = found[model or None] = ModelScores(case_means=[])
        scores.values += n
        scores.passed += passed
        scores.judged += judged
        if n:
            assert scores.case_means is not None
            scores.case_means.append(total / n)
    return found


# --- recounting ---------------------------------------------------------------------------


def rebuild(session: Session) -> None:
    """Every rollup recounted from the outputs and scores (for data written around the
    writers above, as the bench's bulk SQL does; the migration does the same in SQL)."""
    for table in (_DAYS, _LATENCIES, _SCORE_CASES):
        session.execute(delete(table))
    day = day_of(session, Output.finished_at)
    done = [Output.finished_at.is_not(None)]
    session.execute(_DAYS.insert().from_select(
        ["target_id", "day", "outputs", "succeeded", "spent_micros", "tokens_in", "tokens_out"],
        select(Output.target_id, day, func.count(),
               func.sum(case((Output.status == CellStatus.succeeded, 1), else_=0)),
               func.coalesce(func.sum(Output.cost_micros), 0),
               func.coalesce(func.sum(Output.tokens_in), 0),
               func.coalesce(func.sum(Output.tokens_out), 0))
        .where(*done, Output.status.in_((CellStatus.succeeded, CellStatus.failed)))
        .group_by(Output.target_id, day)))
    session.execute(_LATENCIES.insert().from_select(
        ["target_id", "day", "latency_ms", "n"],
        select(Output.target_id, day, Output.latency_ms, func.count())
        .where(*done, Output.status == CellStatus.succeeded, Output.cached.is_(False),
               Output.latency_ms.is_not(None))
        .group_by(Output.target_id, day, Output.latency_ms)))
    model = func.coalesce(RunTarget.model_id, 0)
    columns = ["scorer_id", "version_key", "model_key", "case_id", "total", "n", "passed",
               "judged"]
    for per_version in (True, False):
        key: list[Any] = [ScorerVersion.scorer_id, model, Score.case_id]
        version = Score.scorer_version_id if per_version else literal_column("0")
        session.execute(_SCORE_CASES.insert().from_select(columns, select(
            ScorerVersion.scorer_id, version, *_score_sums(model))
            .join(RunTarget, RunTarget.id == Score.target_id)
            .join(ScorerVersion, ScorerVersion.id == Score.scorer_version_id)
            .group_by(*key, *([Score.scorer_version_id] if per_version else []))))


def scorer_coverage(session: Session, project_id: int
                    ) -> list[tuple[int, int, int, int, bool]]:
    """(scorer id, values, verdicts, models, discriminates) of each of the project's scorers
    that has scores, over every version pooled: which scorer a report can open on. A scorer
    discriminates when its case means differ (a check every output passed does not)."""
    mean = case((ScoreCase.n > 0, ScoreCase.total / ScoreCase.n))
    return [(int(s), int(n or 0), int(j or 0), int(m),
             low is not None and high is not None and float(high) - float(low) > 1e-9)
            for s, n, j, m, low, high in session.execute(
        select(ScoreCase.scorer_id, func.sum(ScoreCase.n), func.sum(ScoreCase.judged),
               func.count(func.distinct(ScoreCase.model_key)), func.min(mean), func.max(mean))
        .join(ScorerConfig, ScorerConfig.id == ScoreCase.scorer_id)
        .where(ScorerConfig.project_id == project_id, ScoreCase.version_key == 0)
        .group_by(ScoreCase.scorer_id).order_by(ScoreCase.scorer_id))]
