"""The RAG summary of a project (rag-eval-data-model's per-model view): for one RAG metrics
scorer (kind "rag_metrics", all its versions), per model over the runs in scope: each
metric's mean (1-5) and the judges' average, each the mean of case means with a bootstrap
interval clustered by case; the share of judgements that produced metrics (Wilson
interval; the rest failed: no grounding, a reply that was not the JSON asked for); and
the judged answers' latency p50/p95 by nearest rank.

It reads the scores themselves (their metrics are in `details`, which no rollup sums):
a RAG scorer judges few outputs next to a leaderboard's million."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports.scope import ReportFilter, output_conditions, query_error, resolve
from assay.core.reports.sql import nearest_rank_of_counts
from assay.core.reports.uncertainty import CONFIDENCE, mean_ci, rate_ci
from assay.core.runs.models import Output, RunTarget
from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion
from assay.scorers.rag import METRICS, RagMetrics

KIND = RagMetrics.kind


def _default_scorer(session: Session, project: Project) -> int | None:
    """The project's first RAG metrics scorer that has scores, else its first one."""
    configs = (ScorerConfig.project_id == project.id, ScorerConfig.kind == KIND)
    scored = session.scalar(
        select(ScorerConfig.id).join(ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id)
        .where(*configs, select(Score.id).where(
            Score.scorer_version_id == ScorerVersion.id).exists())
        .order_by(ScorerConfig.id).limit(1))
    return scored if scored is not None else session.scalar(
        select(ScorerConfig.id).where(*configs).order_by(ScorerConfig.id).limit(1))


class _Model:
    def __init__(self) -> None:
        self.judgements = 0
        self.with_metrics = 0
        self.metrics: dict[str, dict[int, list[float]]] = {m: {} for m in (*METRICS, "avg")}
        self.latencies: dict[int, int] = {}  # output -> latency ms

    def add(self, case_id: int, output_id: int, details: dict[str, Any] | None,
            latency: int | None) -> None:
        self.judgements += 1
        metrics = (details or {}).get("metrics")
        if not isinstance(metrics, dict):
            return
        self.with_metrics += 1
        for name in METRICS:
            if isinstance(metrics.get(name), (int, float)):
                self.metrics[name].setdefault(case_id, []).append(float(metrics[name]))
        if isinstance(metrics.get("average_score"), (int, float)):
            self.metrics["avg"].setdefault(case_id, []).append(float(metrics["average_score"]))
        if latency is not None:
            self.latencies[output_id] = latency


def _mean(by_case: dict[int, list[float]]) -> dict[str, Any]:
    return mean_ci({case: sum(v) / len(v) for case, v in by_case.items()},
                   sum(len(v) for v in by_case.values()))


def rag_summary(session: Session, project: Project, filters: ReportFilter) -> dict[str, Any]:
    chosen = filters.scorer_id if filters.scorer_id is not None \
        else _default_scorer(session, project)
    scope = resolve(session, project, ReportFilter(
        scorer_id=chosen, versions=filters.versions, date_from=filters.date_from,
        date_to=filters.date_to, dataset_id=filters.dataset_id))
    if scope.scorer is None:
        return {"scorer": None, "metrics": list(METRICS), "confidence": CONFIDENCE,
                "items": []}
    if scope.scorer.kind != KIND:
        raise query_error("scorer_id", "Not a RAG metrics scorer", "Not a RAG metrics scorer")
    models: dict[int | None, _Model] = {}
    for model_id, case_id, output_id, details, latency in session.execute(
            select(RunTarget.model_id, Score.case_id, Score.output_id, Score.details,
                   Output.latency_ms)
            .join(Output, Output.id == Score.output_id)
            .join(RunTarget, RunTarget.id == Score.target_id)
            .where(Score.scorer_version_id.in_(scope.scorer.version_ids),
                   *output_conditions(scope))
            .order_by(Score.id)):
        models.setdefault(model_id, _Model()).add(case_id, output_id, details, latency)
    ids = [m for m in models if m is not None]
    names = dict(session.execute(select(ModelConfig.id, ModelConfig.name)
                                 .where(ModelConfig.id.in_(ids))).all()) if ids else {}
    items: list[dict[str, Any]] = []
    for model_id, found in models.items():
        latency = nearest_rank_of_counts(Counter(found.latencies.values()).items(), (50, 95))
        items.append({
            "model_id": model_id, "model_name": names.get(model_id) if model_id else None,
            "judgements": found.judgements, "outputs": len(found.latencies),
            "success_rate": rate_ci(found.with_metrics, found.judgements),
            "metrics": [{"name": name, **_mean(found.metrics[name])} for name in METRICS],
            "average": _mean(found.metrics["avg"]),
            "latency_p50_ms": latency.get(50), "latency_p95_ms": latency.get(95)})
    def best_first(row: dict[str, Any]) -> tuple[bool, float, str]:
        mean = row["average"]["mean"]
        return mean is None, -(mean or 0.0), row["model_name"] or ""

    items.sort(key=best_first)
    return {"scorer": {"id": scope.scorer.id, "name": scope.scorer.name,
                       "kind": scope.scorer.kind,
                       "versions": list(scope.scorer.version_numbers)},
            "metrics": list(METRICS), "confidence": CONFIDENCE, "items": items}
