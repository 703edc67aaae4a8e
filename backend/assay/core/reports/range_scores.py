"""The leaderboard's scores over a date range (the per-case score rollup spans every day).

Per run, the sums of its scores by (model, case): value sum and count, passes and
verdicts. A stopped run whose outputs all finished in the range reads as it does without
one, so its sums are kept (runs/cache.py, as compact arrays) until its scores change. A run
the range cuts is read from its sums per day its outputs finished, kept the same way
(reading its outputs' finishing times live took a quarter of a second). The runs' sums are
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
from assay.core.reports.sql import day_of
from assay.core.runs import cache
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Score

# a run's sums per (day, model, case): 32 bytes each; day 0 when not split by day
ROW = np.dtype([("day", "<i4"), ("model", "<i4"), ("case", "<i4"), ("total", "<f8"),
                ("n", "<i4"), ("passed", "<i4"), ("judged", "<i4")])


def _sums(session: Session, scorer: ScorerChoice, run_ids: Sequence[int], by_day: bool
          ) -> dict[int, NDArray[Any]]:
    """run id -> its (model, case) sums from the scores, and per day its outputs finished
    when `by_day` (day 0 otherwise); the run targets lead, so the scores come from the
    leaderboard index."""
    if not run_ids:
        return {}
    verdict = case((Score.passed.is_(True), 1), (Score.passed.is_(False), 0))
    keys = [RunTarget.run_id, func.coalesce(RunTarget.model_id, 0), Score.case_id]
    if by_day:
        keys.append(day_of(session, Output.finished_at))
    stmt = (select(*keys[:3], func.coalesce(func.sum(Score.value), 0.0),
                   func.count(Score.value), func.coalesce(func.sum(verdict), 0),
                   func.count(verdict), *keys[3:])
            .join(RunTarget, RunTarget.id == Score.target_id)
            .where(RunTarget.run_id.in_(list(run_ids)),
                   Score.scorer_version_id.in_(scorer.version_ids)))
    if by_day:
        stmt = stmt.join(Output, Output.id == Score.output_id)
    rows: dict[int, list[tuple[Any, ...]]] = {run_id: [] for run_id in run_ids}
    for run_id, *values in session.execute(stmt.group_by(*keys)):
        day = rollups.day_number(values.pop()) if by_day else 0
        rows[run_id].append((day, *values))
    return {run_id: np.array(found, dtype=ROW) for run_id, found in rows.items()}


def run_sums(session: Session, scope: Scope, scorer: ScorerChoice
             ) -> list[NDArray[Any]]:
    """Each run's sums in scope: for the runs inside the range their sums over every day,
    for the runs it cuts their sums of the range's days (ranges are whole UTC days, so
    that is exact); kept for the stopped runs, live for those still running."""
    runs = list(session.scalars(select(Run).where(
        *run_conditions(scope), Run.id.in_(rollups.runs_in_days(scope)))))
    whole, cut_runs = rollups.whole_and_cut(session, scope, runs)
    cut = _kept(session, scorer, cut_runs, by_day=True)
    return [*_kept(session, scorer, whole, by_day=False).values(),
            *(rows[rollups.in_days(scope, rows["day"])] for rows in cut.values())]


def _kept(session: Session, scorer: ScorerChoice, runs: Sequence[Run], by_day: bool
          ) -> dict[int, NDArray[Any]]:
    """The sums of `runs` (per day when `by_day`): kept ones, the others computed (and kept
    for the stopped runs)."""
    return cache.kept_arrays(session, runs,
                             scorer.key("range-days" if by_day else "range-sums"),
                             lambda ids: _sums(session, scorer, ids, by_day), ROW)


def warm_sums(session: Session, run: Run, scorer: ScorerChoice, by_day: bool) -> None:
    """Keep the run's sums for a date-range leaderboard of `scorer`'s versions, as a first
    such read keeps them (runs/warm.py), and its sums per day when a range can cut it."""
    _kept(session, scorer, [run], by_day=False)
    if by_day:
        _kept(session, scorer, [run], by_day=True)


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
