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

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import DatasetVersion
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports import rollups, uncertainty
from assay.core.reports.scope import (
    ReportFilter,
    Scope,
    ScorerChoice,
    output_conditions,
    query_error,
    resolve,
    run_conditions,
)
from assay.core.reports.sql import output_scores
from assay.core.runs import cache
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.apply import PAIR_KINDS
from assay.core.scoring.models import RunScorer, Score, ScorerConfig, ScorerVersion

DEFAULT_RUNS = 20
MAX_RUNS = 100

Sums = dict[int, list[float]]  # case id -> [sum of output values, how many]
Point = dict[str, Any]  # {"score": mean, "models": [(model id, mean)]}: one run's point


def _mean(sums: Sums) -> dict[str, Any]:
    return uncertainty.mean_ci({case: total / n for case, (total, n) in sums.items()},
                               int(sum(n for _, n in sums.values())))


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
    (runs/cache.py) until the run's scores change. A run the range cuts is read live, over
    its outputs in the range."""
    assert scope.scorer is not None
    ranged = scope.start is not None or scope.end is not None
    spans = rollups.day_spans(session, [run.id for run in runs]) if ranged else {}
    whole = [run for run in runs if not ranged or rollups.within(scope, spans.get(run.id))]
    cut = [run.id for run in runs if run not in whole]
    return {**_whole_points(session, scope.scorer, whole),
            **_compute(session, scope.scorer, cut, output_conditions(scope))}


def _whole_points(session: Session, scorer: ScorerChoice, runs: list[Run]
                  ) -> dict[int, Point]:
    """The points of `runs` over all their outputs: kept ones, the others computed (and
    kept for the stopped runs)."""
    return cache.kept_many(
        session, runs, "trend:" + ",".join(str(v) for v in scorer.version_ids),
        lambda ids: _compute(session, scorer, ids, []), lambda point: json.dumps(point).encode(),
        json.loads)


def warm_point(session: Session, run: Run, scorer: ScorerChoice) -> None:
    """Keep the run's point for the trend of `scorer`'s versions, as a first read of the
    trend keeps it (runs/warm.py)."""
    _whole_points(session, scorer, [run])


def _compute(session: Session, scorer: ScorerChoice, run_ids: list[int],
             conditions: list[ColumnElement[bool]]) -> dict[int, Point]:
    """The points of `run_ids` from their scores (of the outputs meeting `conditions`: the
    range's): one value per output, a case's mean over its outputs, per run and model."""
    if not run_ids:
        return {}
    scores = output_scores(scorer.version_ids, run_ids)
    overall: dict[int, Sums] = {run_id: {} for run_id in run_ids}
    per_model: dict[int, dict[int | None, Sums]] = {run_id: {} for run_id in run_ids}
    rows = session.execute(
        select(Output.run_id, RunTarget.model_id, Output.case_id,
               func.sum(scores.c.value), func.count(scores.c.value))
        .join(scores, scores.c.output_id == Output.id)
        .join(RunTarget, RunTarget.id == Output.target_id)
        .where(Output.run_id.in_(run_ids), *conditions)
        .group_by(Output.run_id, RunTarget.model_id, Output.case_id))
    for run_id, model_id, case_id, total, n in rows:
        if not n:
            continue
        for sums in (overall[run_id], per_model[run_id].setdefault(model_id, {})):
            entry = sums.setdefault(case_id, [0.0, 0])
            entry[0] += float(total)
            entry[1] += int(n)
    return {run_id: {"score": _mean(overall[run_id]),
                     "models": [(model_id, _mean(sums))
                                for model_id, sums in per_model[run_id].items()]}
            for run_id in run_ids}


def _names(session: Session, model_ids: set[int | None]) -> dict[int | None, str | None]:
    found: dict[int | None, str | None] = {m: None for m in model_ids}
    ids = [m for m in model_ids if m is not None]
    if ids:
        found.update(session.execute(select(ModelConfig.id, ModelConfig.name)
                                     .where(ModelConfig.id.in_(ids))).all())
    return found
