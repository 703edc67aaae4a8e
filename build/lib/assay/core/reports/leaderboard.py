"""The leaderboard across runs: one row per model configuration, over the outputs in
scope (see scope.py).

Per model: runs, finished outputs (succeeded + failed; skipped cells were never sent) with
the success rate; with a scorer, its scores, the mean score (mean of case means, with a
bootstrap interval clustered by case) and the pass rate (Wilson interval); cost (total and
per finished output), tokens, and latency p50/p95 by nearest rank over succeeded uncached
outputs (as the run summary counts them).

Every score counts once: a case's mean is over all the scores its outputs got, and the
pass rate over all the verdicts. With one result per output (deterministic checks, a
single judge: the usual case) that is the per-output reading of the run dashboard and the
diff; a panel of judges weighs each judge once here. Reducing a million scores to one per
output first (as the per-run reports do) took three times as long: the database then had
to hash every output.

The database does the aggregation: per target (outputs, cost, tokens), per (model,
latency) for the percentiles, and per (model, case) over the scores, so only per-case sums
come back (the bootstrap resamples cases). Scores carry their output's target and case, so
that last one reads the scores and the run targets only; joining each score to its output
to learn them made it four times slower over a million.

Rows are ordered by mean score, then pass rate, then success rate (best first; models
without one last), then name."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports import range_scores, rollups, uncertainty
from assay.core.reports.scope import (
    ReportFilter,
    Scope,
    ScorerChoice,
    resolve,
)
from assay.core.reports.sql import (
    as_int,
    for_aggregates,
    nearest_rank_of_counts,
    ratio,
)
from assay.core.runs.models import CellStatus, Run, RunTarget
from assay.core.scoring.judge_mode import MODE as JUDGE_MODE

FINISHED = (CellStatus.succeeded, CellStatus.failed)


@dataclass
class _Model:
    runs: set[int] = field(default_factory=set)
    outputs: int = 0
    succeeded: int = 0
    spent: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    scores: rollups.ModelScores = field(default_factory=rollups.ModelScores)


def _output_sums(session: Session, scope: Scope
                 ) -> tuple[list[Sequence[Any]], dict[int | None, list[tuple[int, int]]]]:
    """Per target (target id, outputs, succeeded, spent, tokens in, tokens out), and per
    model the (latency, how many) of its succeeded uncached outputs, from the rollups."""
    sums: dict[int, list[int]] = {}
    for target, _, *values in rollups.target_days(session, scope):
        found = sums.setdefault(target, [0] * 5)
        for i, value in enumerate(values[:5]):  # the model's own calls: judges aside
            found[i] += value
    return [(target, *values) for target, values in sums.items()], \
        rollups.latency_counts(session, scope)


def _by_target(session: Session, rows: list[Sequence[Any]]) -> dict[int | None, _Model]:
    """model id -> runs, outputs, successes, cost and tokens, from the targets' sums. A
    judge-mode run's outputs are the dataset's questions, not a model's answers: left out."""
    targets = {t: (run, model, (settings or {}).get("mode") == JUDGE_MODE)
               for t, run, model, settings in session.execute(
        select(RunTarget.id, RunTarget.run_id, RunTarget.model_id, Run.settings)
        .join(Run, Run.id == RunTarget.run_id)
        .where(RunTarget.id.in_([row[0] for row in rows])))} if rows else {}
    found: dict[int | None, _Model] = {}
    for target, n, succeeded, spent, tokens_in, tokens_out in rows:
        run, model_id, judge_mode = targets[target]
        if judge_mode:
            continue
        model = found.setdefault(model_id, _Model())
        model.runs.add(run)
        model.outputs += as_int(n)
        model.succeeded += as_int(succeeded)
        model.spent += as_int(spent)
        model.tokens_in += as_int(tokens_in)
        model.tokens_out += as_int(tokens_out)
    return found


def _add_scores(session: Session, scope: Scope, scorer: ScorerChoice,
                models: dict[int | None, _Model]) -> None:
    """Each model's scores: from the rollup, or for a date range from the runs' sums in it
    (range_scores.py)."""
    found = (rollups.model_scores(session, scope, scorer.id, scorer.version_ids)
             if scope.start is None and scope.end is None
             else range_scores.model_scores(session, scope, scorer))
    for model_id, scores in found.items():
        models.setdefault(model_id, _Model()).scores = scores


def _names(session: Session, models: set[int | None]) -> dict[int, str]:
    ids = [m for m in models if m is not None]
    return dict(session.execute(select(ModelConfig.id, ModelConfig.name)
                                .where(ModelConfig.id.in_(ids))).all()) if ids else {}


def _row(model_id: int | None, name: str | None, sums: _Model, latency: dict[int, int],
         scored: bool) -> dict[str, Any]:
    return {
        "model_id": model_id, "model_name": name, "runs": len(sums.runs),
        "outputs": sums.outputs, "succeeded": sums.succeeded,
        "failed": sums.outputs - sums.succeeded,
        "success_rate": uncertainty.rate_ci(sums.succeeded, sums.outputs),
        "scores": sums.scores.values,
        "score": uncertainty.mean_ci_of(sums.scores.case_means or [], sums.scores.values)
        if scored else None,
        "pass_rate": uncertainty.rate_ci(sums.scores.passed, sums.scores.judged)
        if scored else None,
        "spent_micros": sums.spent,
        "cost_per_output_micros": ratio(sums.spent, sums.outputs),
        "tokens_in": sums.tokens_in, "tokens_out": sums.tokens_out,
        "tokens_in_per_output": ratio(sums.tokens_in, sums.outputs),
        "tokens_out_per_output": ratio(sums.tokens_out, sums.outputs),
        "latency_p50_ms": latency.get(50), "latency_p95_ms": latency.get(95)}


def _order(row: dict[str, Any]) -> tuple[Any, ...]:
    def best_first(value: float | None) -> tuple[bool, float]:
        return (value is None, -(value or 0.0))

    score = row["score"]["mean"] if row["score"] else None
    passed = row["pass_rate"]["rate"] if row["pass_rate"] else None
    return (best_first(score), best_first(passed), best_first(row["success_rate"]["rate"]),
            row["model_name"] is None, row["model_name"] or "")


def leaderboard(session: Session, project: Project, filters: ReportFilter) -> dict[str, Any]:
    scope = resolve(session, project, filters)
    for_aggregates(session)
    target_rows, latencies = _output_sums(session, scope)
    models = _by_target(session, target_rows)
    if scope.scorer is not None:
        _add_scores(session, scope, scope.scorer, models)
    names = _names(session, set(models))
    rows = [_row(model, names.get(model) if model is not None else None, found,
                 nearest_rank_of_counts(latencies.get(model, [])), scope.scorer is not None)
            for model, found in models.items()]
    return {"scorer": scorer_view(scope), "confidence": uncertainty.CONFIDENCE,
            "items": sorted(rows, key=_order)}


def scorer_view(scope: Scope) -> dict[str, Any] | None:
    if scope.scorer is None:
        return None
    return {"id": scope.scorer.id, "name": scope.scorer.name, "kind": scope.scorer.kind,
            "versions": list(scope.scorer.version_numbers)}

