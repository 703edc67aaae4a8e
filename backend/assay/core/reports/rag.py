"""The RAG summary of a project (the per-model view of RAG metrics): for one RAG metrics
scorer (kind "rag_metrics", all its versions), per model over the runs in scope (or one
run): each metric's mean (1-5) and the judges' average, each the mean of case means with a
bootstrap interval clustered by case; the share of judgements that produced metrics
(Wilson interval) out of those due, where a call that failed (no answer to judge) counts as
a judgement that did not; and the judged answers' latency p50/p95 by nearest rank.

A model's runs that answered from documents and its runs that did not are separate rows:
their groundedness is judged against different things (retrieved chunks, the reference).

It reads the scores themselves (their metrics are in `details`, which no rollup sums):
a RAG scorer judges few outputs next to a leaderboard's million."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports.scope import ReportFilter, output_conditions, query_error, resolve
from assay.core.reports.sql import nearest_rank_of_counts
from assay.core.reports.uncertainty import CONFIDENCE, mean_ci, rate_ci
from assay.core.runs.models import CellStatus, Output, Run, RunTarget
from assay.core.scoring.models import RunScorer, Score, ScorerConfig, ScorerVersion
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
        self.failed_calls = 0
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


def _answers_from_documents(settings: dict[str, Any] | None) -> bool:
    return bool((settings or {}).get("rag"))


def _failed_calls(session: Session, scope: Any, run_id: int | None
                  ) -> list[tuple[int | None, bool, int]]:
    """(model, answered from documents, calls that failed) over the runs the scorer was
    attached to: outputs it never judged because there was no answer."""
    runs = select(RunScorer.run_id).where(
        RunScorer.scorer_version_id.in_(scope.scorer.version_ids))
    rows = session.execute(
        select(RunTarget.model_id, Output.run_id, func.count())
        .join(RunTarget, RunTarget.id == Output.target_id)
        .where(Output.status == CellStatus.failed, Output.run_id.in_(runs),
               *output_conditions(scope), *_one_run(run_id))
        .group_by(RunTarget.model_id, Output.run_id)).all()
    settings: dict[int, Any] = dict(session.execute(select(Run.id, Run.settings).where(
        Run.id.in_({r[1] for r in rows}))).all()) if rows else {}
    return [(model_id, _answers_from_documents(settings.get(rid)), int(n))
            for model_id, rid, n in rows]


def _one_run(run_id: int | None) -> list[Any]:
    return [] if run_id is None else [Run.id == run_id]


def rag_summary(session: Session, project: Project, filters: ReportFilter,
                run_id: int | None = None) -> dict[str, Any]:
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
    if run_id is not None and session.scalar(select(Run.id).where(
            Run.id == run_id, Run.project_id == project.id)) is None:
        raise query_error("run_id", "No such run in this project", "No such run")
    models: dict[tuple[int | None, bool], _Model] = {}
    for model_id, settings, case_id, output_id, details, latency in session.execute(
            select(RunTarget.model_id, Run.settings, Score.case_id, Score.output_id,
                   Score.details, Output.latency_ms)
            .join(Output, Output.id == Score.output_id)
            .join(RunTarget, RunTarget.id == Score.target_id)
            .where(Score.scorer_version_id.in_(scope.scorer.version_ids),
                   *output_conditions(scope), *_one_run(run_id))
            .order_by(Score.id)):
        key = (model_id, _answers_from_documents(settings))
        models.setdefault(key, _Model()).add(case_id, output_id, details, latency)
    for model_id, documents, failed in _failed_calls(session, scope, run_id):
        models.setdefault((model_id, documents), _Model()).failed_calls += failed
    ids = [m for m, _ in models if m is not None]
    names = dict(session.execute(select(ModelConfig.id, ModelConfig.name)
                                 .where(ModelConfig.id.in_(ids))).all()) if ids else {}
    items: list[dict[str, Any]] = []
    for (model_id, documents), found in models.items():
        latency = nearest_rank_of_counts(Counter(found.latencies.values()).items(), (50, 95))
        items.append({
            "model_id": model_id, "model_name": names.get(model_id) if model_id else None,
            "answers_from_documents": documents,
            "judgements": found.judgements, "outputs": len(found.latencies),
            "failed_calls": found.failed_calls,
            "success_rate": rate_ci(found.with_metrics,
                                    found.judgements + found.failed_calls),
            "metrics": [{"name": name, **_mean(found.metrics[name])} for name in METRICS],
            "average": _mean(found.metrics["avg"]),
            "latency_p50_ms": latency.get(50), "latency_p95_ms": latency.get(95)})
    def best_first(row: dict[str, Any]) -> tuple[bool, bool, float, str]:
        mean = row["average"]["mean"]
        return not row["answers_from_documents"], mean is None, -(mean or 0.0), \
            row["model_name"] or ""

    items.sort(key=best_first)
    return {"scorer": {"id": scope.scorer.id, "name": scope.scorer.name,
                       "kind": scope.scorer.kind,
                       "versions": list(scope.scorer.version_numbers)},
            "metrics": list(METRICS), "confidence": CONFIDENCE, "items": items}
