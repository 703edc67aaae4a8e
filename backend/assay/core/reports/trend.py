"""The score trend across runs: one scorer's mean score per run, overall and per model,
for the project's most recent runs that scorer scored (oldest first, so a chart reads left
to right).

A run's score is read as the run dashboard reads it: one value per output (the mean of its
judges, see sql.output_scores), a case's mean over its outputs, and the mean of the case
means with a bootstrap interval clustered by case. Per model the same over the outputs of
the run's targets on that model (several targets of one model are pooled). Versions of the
scorer are pooled unless versions=latest, and the date range keeps the outputs that
finished within it (scope.py); runs with no score in scope are left out. Without a scorer
named, the project's latest run's first pointwise scorer is followed; a project without one
has an empty trend."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import DatasetVersion
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports import rollups, uncertainty
from assay.core.reports.scope import (
    ReportFilter,
    Scope,
    ScorerChoice,
    query_error,
    resolve,
    run_conditions,
)
from assay.core.reports.sql import day_of, output_scores
from assay.core.runs import cache
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.apply import PAIR_KINDS
from assay.core.scoring.models import RunScorer, Score, ScorerConfig, ScorerVersion

DEFAULT_RUNS = 20
MAX_RUNS = 100

Point = dict[str, Any]  # {"score": mean, "models": [(model id, mean)]}: one run's point
# a run's sums of output values per (day, model, case); model 0: a target without one
ROW = np.dtype([("day", "<i4"), ("model", "<i4"), ("case", "<i4"), ("total", "<f8"),
                ("n", "<i4")])


def default_scorer(session: Session, project: Project) -> int | None:
    """The first scorer (by position) that scores outputs one by one of the project's
    latest run that has one."""
    return session.scalar(
        select(ScorerConfig.id).join(ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id)
        .join(RunScorer, RunScorer.scorer_version_id == ScorerVersion.id)
        .join(Run, Run.id == RunScorer.run_id)
        .where(Run.project_id == project.id, ScorerConfig.kind.not_in(PAIR_KINDS))
        .order_by(Run.id.desc(), RunScorer.position).limit(1))


def score_trend(session: Session, project: Project, filters: ReportFilter,
                limit: int = DEFAULT_RUNS) -> dict[str, Any]:
    if not 1 <= limit <= MAX_RUNS:
        raise query_error("limit", f"Between 1 and {MAX_RUNS}", "Too many or too few runs")
    if filters.scorer_id is None:
        filters = replace(filters, scorer_id=default_scorer(session, project))
    scope = resolve(session, project, filters)
    scorer = scope.scorer
    if scorer is None:
        return {"scorer": None, "confidence": uncertainty.CONFIDENCE, "models": [],
                "runs": []}
    scored_runs = select(Score.run_id).where(
        Score.scorer_version_id.in_(scorer.version_ids), Score.value.is_not(None))
    conditions = [*run_conditions(scope), Run.id.in_(scored_runs)]
    ranged = scope.start is not None or scope.end is not None
    if ranged:  # runs with outputs finished in the range, from the rollup of their days
        conditions.append(Run.id.in_(rollups.runs_in_days(scope)))
    recent = list(session.execute(
        select(Run, DatasetVersion.dataset_id)
        .join(DatasetVersion, DatasetVersion.id == Run.dataset_version_id)
        .where(*conditions).order_by(Run.id.desc()).limit(limit)).all())
    points = _points(session, scope, [run for run, _ in recent])
    names = _names(session, {m for point in points.values() for m, _ in point["models"]})
    models = sorted(names, key=lambda m: (names[m] is None, names[m] or "", m or 0))
    return {
        "scorer": {"id": scorer.id, "name": scorer.name, "kind": scorer.kind,
                   "versions": list(scorer.version_numbers)},
        "confidence": uncertainty.CONFIDENCE,
        "models": [{"model_id": m, "model_name": names[m]} for m in models],
        "runs": [{"run_id": run.id, "name": run.name, "created_at": run.created_at,
                  "dataset_id": dataset_id, "score": points[run.id]["score"],
                  "models": [{"model_id": m, "model_name": names[m], "score": score}
                             for m, score in sorted(points[run.id]["models"],
                                                    key=lambda item: models.index(item[0]))]}
                 for run, dataset_id in reversed(recent)],
    }


def _points(session: Session, scope: Scope, runs: list[Run]) -> dict[int, Point]:
    """run id -> its point. A stopped run whose scored outputs all finished within the
    range (every run, without one) reads as it does without a range: that point is kept
    (runs/cache.py) until the run's scores change. A run the range cuts is read from its
    sums per day, kept the same way: those of the range's days are added up (ranges are
    whole UTC days, so that is exact)."""
    assert scope.scorer is not None
    whole, cut_runs = rollups.whole_and_cut(session, scope, runs)
    cut = _day_sums(session, scope.scorer, cut_runs)
    return {**_whole_points(session, scope.scorer, whole),
            **{run_id: _point(rows[rollups.in_days(scope, rows["day"])])
               for run_id, rows in cut.items()}}


def _whole_points(session: Session, scorer: ScorerChoice, runs: list[Run]
                  ) -> dict[int, Point]:
    """The points of `runs` over all their outputs: kept ones, the others computed (and
    kept for the stopped runs)."""
    return cache.kept_many(
        session, runs, scorer.key("trend"),
        lambda ids: {run_id: _point(rows)
                     for run_id, rows in _sums(session, scorer, ids, by_day=False).items()},
        lambda point: json.dumps(point).encode(), json.loads)


def _day_sums(session: Session, scorer: ScorerChoice, runs: list[Run]
              ) -> dict[int, NDArray[Any]]:
    """The sums of `runs` per day: kept ones, the others computed (and kept for the
    stopped runs)."""
    return cache.kept_arrays(session, runs, scorer.key("trend-days"),
                             lambda ids: _sums(session, scorer, ids, by_day=True), ROW)


def warm_point(session: Session, run: Run, scorer: ScorerChoice, by_day: bool) -> None:
    """Keep the run's point for the trend of `scorer`'s versions, as a first read of the
    trend keeps it (runs/warm.py), and its sums per day when a range can cut it."""
    _whole_points(session, scorer, [run])
    if by_day:
        _day_sums(session, scorer, [run])


def _sums(session: Session, scorer: ScorerChoice, run_ids: list[int], by_day: bool
          ) -> dict[int, NDArray[Any]]:
    """run id -> the sums of its output values (one per output, see sql.output_scores) per
    (model, case), and per day the outputs finished when `by_day` (day 0 otherwise)."""
    if not run_ids:
        return {}
    scores = output_scores(scorer.version_ids, run_ids)
    keys = [Output.run_id, func.coalesce(RunTarget.model_id, 0), Output.case_id]
    if by_day:
        keys.append(day_of(session, Output.finished_at))
    found: dict[int, list[tuple[int, int, int, float, int]]] = {r: [] for r in run_ids}
    for run_id, model, case_id, total, n, *day in session.execute(
            select(*keys[:3], func.sum(scores.c.value), func.count(scores.c.value), *keys[3:])
            .join(scores, scores.c.output_id == Output.id)
            .join(RunTarget, RunTarget.id == Output.target_id)
            .where(Output.run_id.in_(run_ids)).group_by(*keys)):
        if n:
            found[run_id].append((rollups.day_number(day[0]) if day else 0, model, case_id,
                                  float(total), int(n)))
    return {run_id: np.array(rows, dtype=ROW) for run_id, rows in found.items()}


def _point(rows: NDArray[Any]) -> Point:
    """A run's point from its sums: overall, and per model (None for traces' targets)."""
    return {"score": _mean(rows),
            "models": [(int(model) or None, _mean(rows[rows["model"] == model]))
                       for model in np.unique(rows["model"])]}


def _mean(rows: NDArray[Any]) -> dict[str, Any]:
    """The mean of case means (a case's mean over its outputs), with its interval."""
    cases, at = np.unique(rows["case"], return_inverse=True)
    total = np.bincount(at, weights=rows["total"], minlength=len(cases))
    n = np.bincount(at, weights=rows["n"], minlength=len(cases))
    return uncertainty.mean_ci_of((total / n).tolist(), int(n.sum()))


def _names(session: Session, model_ids: set[int | None]) -> dict[int | None, str | None]:
    found: dict[int | None, str | None] = {m: None for m in model_ids}
    ids = [m for m in model_ids if m is not None]
    if ids:
        found.update(session.execute(select(ModelConfig.id, ModelConfig.name)
                                     .where(ModelConfig.id.in_(ids))).all())
    return found
