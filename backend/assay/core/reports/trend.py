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

from dataclasses import replace
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import DatasetVersion
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports import uncertainty
from assay.core.reports.scope import (
    ReportFilter,
    output_conditions,
    query_error,
    resolve,
    run_conditions,
)
from assay.core.reports.sql import output_scores
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.apply import PAIR_KINDS
from assay.core.scoring.models import RunScorer, Score, ScorerConfig, ScorerVersion

DEFAULT_RUNS = 20
MAX_RUNS = 100

Sums = dict[int, list[float]]  # case id -> [sum of output values, how many]


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
    if scope.start is not None or scope.end is not None:  # runs with outputs in the range
        conditions.append(Run.id.in_(select(Output.run_id).where(*output_conditions(scope))))
    recent = list(session.execute(
        select(Run.id, Run.name, Run.created_at, DatasetVersion.dataset_id)
        .join(DatasetVersion, DatasetVersion.id == Run.dataset_version_id)
        .where(*conditions).order_by(Run.id.desc()).limit(limit)))
    ids = [r.id for r in recent]
    scores = output_scores(scorer.version_ids, ids)
    overall: dict[int, Sums] = {}
    per_model: dict[int, dict[int | None, Sums]] = {}
    names: dict[int | None, str | None] = {}
    rows: list[Any] = list(session.execute(
        select(Output.run_id, RunTarget.model_id, ModelConfig.name, Output.case_id,
               func.sum(scores.c.value), func.count(scores.c.value))
        .join(scores, scores.c.output_id == Output.id)
        .join(RunTarget, RunTarget.id == Output.target_id)
        .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
        .where(Output.run_id.in_(ids), *output_conditions(scope))
        .group_by(Output.run_id, RunTarget.model_id, ModelConfig.name, Output.case_id)
    )) if ids else []
    for run_id, model_id, model_name, case_id, total, n in rows:
        if not n:
            continue
        names[model_id] = model_name
        for sums in (overall.setdefault(run_id, {}),
                     per_model.setdefault(run_id, {}).setdefault(model_id, {})):
            entry = sums.setdefault(case_id, [0.0, 0])
            entry[0] += float(total)
            entry[1] += int(n)
    models = sorted(names, key=lambda m: (names[m] is None, names[m] or "", m or 0))
    return {
        "scorer": {"id": scorer.id, "name": scorer.name, "kind": scorer.kind,
                   "versions": list(scorer.version_numbers)},
        "confidence": uncertainty.CONFIDENCE,
        "models": [{"model_id": m, "model_name": names[m]} for m in models],
        "runs": [{"run_id": r.id, "name": r.name, "created_at": r.created_at,
                  "dataset_id": r.dataset_id, "score": _mean(overall.get(r.id, {})),
                  "models": [{"model_id": m, "model_name": names[m],
                              "score": _mean(per_model[r.id][m])}
                             for m in models if m in per_model.get(r.id, {})]}
                 for r in reversed(recent)],
    }
