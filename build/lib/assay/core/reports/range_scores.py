"""The leaderboard's scores over a date range (the per-case score rollup spans every day).

Per run, the sums of its scores by (model, case): value sum and count, passes and
verdicts. A stopped run whose outputs all finished in the range reads as it does without
one, so its sums are kept (runs/cache.py, as compact arrays) until its scores change; only
the runs the range cuts are read with their outputs' finishing times. The runs' sums are
then added up per (model, case) in NumPy: a week of a million-output project is a few
hundred thousand entries, which the database took most of a second to hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from assay.core.reports import rollups
from assay.core.reports.scope import Scope, ScorerChoice, run_conditions
from assay.core.runs import cache
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Score

ROW = np.dtype([("model", "<i4"), ("case", "<i4"), ("total", "<f8"), ("n", "<i4"),
                ("passed", "<i4"), ("judged", "<i4")])  # 28 bytes a (model, case)


def _sums(session: Session, scope: Scope, scorer: ScorerChoice, run_ids: Sequence[int],
          cut: bool) -> dict[int, NDArray[Any]]:
    """run id -> its (model, case) sums, from the scores (of outputs finished in the range
    when `cut`); the run targets lead, so the scores come from the leaderboard index."""
    if not run_ids:
        return {}
    verdict = case((Score.passed.is_(True), 1), (Score.passed.is_(False), 0))
    model = func.coalesce(RunTarget.model_id, 0)
    stmt = (select(RunTarget.run_id, model, Score.case_id,
                   func.coalesce(func.sum(Score.value), 0.0), func.count(Score.value),
                   func.coalesce(func.sum(verdict), 0), func.count(verdict))
            .join(RunTarget, RunTarget.id == Score.target_id)
            .where(RunTarget.run_id.in_(list(run_ids)),
                   Score.scorer_version_id.in_(scorer.version_ids)))
    if cut:
        stmt = stmt.join(Output, Output.id == Score.output_id)
        if scope.start is not None:
            stmt = stmt.where(Output.finished_at >= scope.start)
        if scope.end is not None:
            stmt = stmt.where(Output.finished_at <= scope.end)
    rows: dict[int, list[tuple[Any, ...]]] = {run_id: [] for run_id in run_ids}
    for run_id, *values in session.execute(
            stmt.group_by(RunTarget.run_id, model, Score.case_id)):
        rows[run_id].append(tuple(values))
    return {run_id: np.array(found, dtype=ROW) for run_id, found in rows.items()}


def run_sums(session: Session, scope: Scope, scorer: ScorerChoice
             ) -> list[NDArray[Any]]:
    """Each run's sums in scope: kept ones for the runs inside the range, live ones for
    the runs it cuts and those still running."""
    runs = list(session.scalars(select(Run).where(
        *run_conditions(scope), Run.id.in_(rollups.runs_in_days(scope)))))
    spans = rollups.day_spans(session, [run.id for run in runs])
    whole = [run for run in runs if rollups.within(scope, spans.get(run.id))]
    cut = _sums(session, scope, scorer, [run.id for run in runs if run not in whole],
                cut=True)
    return [*_whole_sums(session, scope, scorer, whole), *cut.values()]


def _whole_sums(session: Session, scope: Scope, scorer: ScorerChoice, runs: Sequence[Run]
                ) -> list[NDArray[Any]]:
    """The sums of `runs` over all their scores: kept ones, the others computed (and kept
    for the stopped runs)."""
    kept = cache.kept_many(
        session, runs, "range-scores:" + ",".join(str(v) for v in scorer.version_ids),
        lambda ids: _sums(session, scope, scorer, ids, cut=False), lambda sums: sums.tobytes(),
        lambda payload: np.frombuffer(payload, dtype=ROW))
    return list(kept.values())


def warm_sums(session: Session, run: Run, scorer: ScorerChoice) -> None:
    """Keep the run's sums for a date-range leaderboard of `scorer`'s versions, as a first
    such read keeps them (runs/warm.py)."""
    _whole_sums(session, Scope(run.project_id, scorer, None, None, None), scorer, [run])


def model_scores(session: Session, scope: Scope, scorer: ScorerChoice
                 ) -> dict[int | None, rollups.ModelScores]:
    """What rollups.model_scores gives without a range, over the range's scores."""
    parts = [part for part in run_sums(session, scope, scorer) if part.size]
    if not parts:
        return {}
    rows = np.concatenate(parts)
    # one int64 key per (model, case), so the grouping is a flat sort
    keys, at = np.unique((rows["model"].astype(np.int64) << 32) | rows["case"],
                         return_inverse=True)
    total, n, passed, judged = (np.bincount(at, weights=rows[name], minlength=len(keys))
                                for name in ("total", "n", "passed", "judged"))
    models = keys >> 32
    found: dict[int | None, rollups.ModelScores] = {}
    for model in np.unique(models):
        mine = models == model
        valued = n[mine] > 0
        found[int(model) or None] = rollups.ModelScores(
            int(n[mine].sum()), int(passed[mine].sum()), int(judged[mine].sum()),
            (total[mine][valued] / n[mine][valued]).tolist())
    return found
