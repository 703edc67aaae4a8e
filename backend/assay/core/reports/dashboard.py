"""A run's dashboard (edison FR-RV-001): the composite score with its bootstrap interval,
the pass and success rates with Wilson intervals, the delta against the previous run on the
same dataset, the pairwise win rate, cost, tokens, latency and counts; the same per target
with its criterion means; best and worst target; the criterion breakdown; facets by tag,
input length and difficulty; and the score trend over the dataset's recent runs.

The score is one scorer's: the one asked for, else the run's headline scorer (headline.py:
pinned, else the composite or a scorer that discriminates; all versions of it pooled, as
each run pinned one). The composite is the scorer's value: a
rubric judge already weighs its criteria into it. Without a scorer the score parts are None
and everything else stands. A target's numbers are the run summary's (results.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core import stats
from assay.core.datasets.cases import input_text
from assay.core.datasets.models import Case, Dataset, DatasetVersion
from assay.core.projects.models import Project
from assay.core.reports import uncertainty
from assay.core.reports.headline import headline_scorer
from assay.core.reports.insights import criteria_view, facets_view, win_rates
from assay.core.reports.scope import ScorerChoice, query_error, scorer_choice
from assay.core.reports.sql import output_scores, percentiles_by, ratio
from assay.core.runs import results
from assay.core.runs import service as runs
from assay.core.runs.models import CellStatus, Output, Run
from assay.core.scoring.models import RunScorer, Score, ScorerVersion
from assay.core.stats import rates

TREND_RUNS = 10
VERSION_FIELD = "scorer_version_id"


@dataclass(frozen=True)
class Scored:
    """One output of the run with its score (one per output: see sql.output_scores)."""

    output_id: int
    case_id: int
    target_id: int
    value: float | None
    passed: bool | None
    output_chars: int | None


def one_version(session: Session, run: Run, scorer: ScorerChoice,
                version_id: int | None) -> ScorerChoice:
    """The scorer narrowed to one version for this run's numbers: `version_id` (422 when
    it is not a version of the scorer), else the newest version the run pins or holds
    scores of (a run scored again with a newer version keeps both versions' scores)."""
    if version_id is not None:
        if version_id not in scorer.version_ids:
            raise query_error(VERSION_FIELD, f"Not a version of the scorer {scorer.name!r}",
                              "The scorer version does not match the scorer")
        chosen = version_id
    else:
        ids = list(scorer.version_ids)
        held = set(session.scalars(select(RunScorer.scorer_version_id).where(
            RunScorer.run_id == run.id, RunScorer.scorer_version_id.in_(ids))))
        held |= set(session.scalars(select(Score.scorer_version_id).where(
            Score.run_id == run.id, Score.scorer_version_id.in_(ids)).distinct()))
        if not held:
            return scorer
        chosen = max(held, key=ids.index)  # version_ids run oldest to newest
    number = scorer.version_numbers[scorer.version_ids.index(chosen)]
    return replace(scorer, version_ids=(chosen,), version_numbers=(number,))


def scored_outputs(session: Session, run: Run, scorer: ScorerChoice) -> list[Scored]:
    scores = output_scores(scorer.version_ids, [run.id])
    rows = session.execute(
        select(Output.id, Output.case_id, Output.target_id, scores.c.value, scores.c.passed,
               func.length(Output.text))
        .outerjoin(scores, scores.c.output_id == Output.id)
        .where(Output.run_id == run.id, Output.status.in_((CellStatus.succeeded,
                                                            CellStatus.failed))))
    return [Scored(o, c, t, None if v is None else float(v), None if p is None else p == 1,
                   None if n is None else int(n)) for o, c, t, v, p, n in rows]


def _case_means(rows: Sequence[Scored]) -> dict[int, float]:
    sums: dict[int, list[float]] = {}
    for row in rows:
        if row.value is not None:
            entry = sums.setdefault(row.case_id, [0.0, 0.0])
            entry[0] += row.value
            entry[1] += 1
    return {case: total / n for case, (total, n) in sums.items()}


def _score_parts(rows: Sequence[Scored]) -> dict[str, Any]:
    verdicts = [r.passed for r in rows if r.passed is not None]
    values = sum(1 for r in rows if r.value is not None)
    return {"scored": values, "score": uncertainty.mean_ci(_case_means(rows), values),
            "pass_rate": uncertainty.rate_ci(sum(verdicts), len(verdicts))}


def _trend(session: Session, run: Run, scorer: ScorerChoice, dataset_id: int
           ) -> list[dict[str, Any]]:
    """The dataset's last runs up to this one (oldest first), each with its score."""
    recent = list(session.execute(
        select(Run.id, Run.name, Run.created_at)
        .join(DatasetVersion, DatasetVersion.id == Run.dataset_version_id)
        .where(Run.project_id == run.project_id, DatasetVersion.dataset_id == dataset_id,
               Run.id <= run.id)
        .order_by(Run.id.desc()).limit(TREND_RUNS)))
    ids = [r.id for r in recent]
    scores = output_scores(scorer.version_ids, ids)
    sums: dict[int, dict[int, list[float]]] = {}
    for run_id, case_id, total, n in session.execute(
            select(Output.run_id, Output.case_id, func.sum(scores.c.value),
                   func.count(scores.c.value))
            .join(scores, scores.c.output_id == Output.id)
            .where(Output.run_id.in_(ids)).group_by(Output.run_id, Output.case_id)):
        if n:
            sums.setdefault(run_id, {})[case_id] = [float(total), int(n)]
    return [{"run_id": r.id, "name": r.name, "created_at": r.created_at,
             "score": uncertainty.mean_ci(
                 {c: t / n for c, (t, n) in sums.get(r.id, {}).items()},
                 int(sum(n for _, n in sums.get(r.id, {}).values())))}
            for r in reversed(recent)]


def _delta(trend: list[dict[str, Any]]) -> dict[str, Any] | None:
    """This run's score against the latest earlier run on the dataset that has one."""
    current = trend[-1]["score"]["mean"] if trend else None
    earlier = [t for t in trend[:-1] if t["score"]["mean"] is not None]
    if current is None or not earlier:
        return None
    previous = earlier[-1]
    absolute = current - previous["score"]["mean"]
    percentage = ratio(absolute * 100, previous["score"]["mean"])
    return {"previous_run_id": previous["run_id"], "previous": previous["score"]["mean"],
            "absolute": absolute, "percentage": percentage}


def _facet_records(session: Session, rows: Sequence[Scored], kind: str
                   ) -> list[stats.FacetRecord]:
    ids = {r.case_id for r in rows}
    cases = {c.id: c for c in session.scalars(select(Case).where(Case.id.in_(ids)))} \
        if ids else {}
    records = []
    for row in rows:
        found = cases[row.case_id]
        records.append(stats.FacetRecord(
            case=row.case_id, value=row.value, passed=row.passed,
            tags=tuple(t for t in (found.tags or []) if isinstance(t, str) and t),
            difficulty=found.difficulty,
            input_chars=len(input_text(kind, found.input, found.trace)),
            output_chars=row.output_chars))
    return records


def _criteria_rows(session: Session, run: Run, scorer: ScorerChoice
                   ) -> list[tuple[int, dict[str, float]]]:
    return [(output_id, criteria or {}) for output_id, criteria in session.execute(
        select(Score.output_id, Score.criteria).where(
            Score.run_id == run.id, Score.scorer_version_id.in_(scorer.version_ids),
            Score.value.is_not(None)))]


def dashboard(session: Session, project: Project, run_id: int,
              scorer_id: int | None = None,
              scorer_version_id: int | None = None) -> dict[str, Any]:
    run = runs.get_run(session, project, run_id)
    summary = results.summary(session, run)
    dataset = session.scalars(select(Dataset).join(
        DatasetVersion, DatasetVersion.dataset_id == Dataset.id)
        .where(DatasetVersion.id == run.dataset_version_id)).one()
    if scorer_version_id is not None and scorer_id is None:
        scorer_id = session.scalar(select(ScorerVersion.scorer_id).where(
            ScorerVersion.id == scorer_version_id))
        if scorer_id is None:
            raise query_error(VERSION_FIELD, "Not a scorer version of this project",
                              "No such scorer version")
    chosen = scorer_id if scorer_id is not None else headline_scorer(session, run)
    pooled = scorer_choice(session, project.id, chosen) if chosen is not None else None
    scorer = one_version(session, run, pooled, scorer_version_id) if pooled else None
    targets = summary["targets"]
    wins = win_rates(session, run.id)
    totals = {key: sum(t[key] for t in targets) for key in (
        "total", "succeeded", "failed", "skipped", "pending", "spent_micros", "tokens_in",
        "tokens_out")}
    latency = percentiles_by(session, Output.run_id, Output.latency_ms, [
        Output.run_id == run.id, Output.status == CellStatus.succeeded,
        Output.cached.is_(False)]).get(run.id, {})
    body: dict[str, Any] = {
        "run_id": run.id, "name": run.name, "status": run.status,
        "dataset_id": dataset.id, "created_at": run.created_at,
        "finished_at": run.finished_at, "confidence": uncertainty.CONFIDENCE,
        "scorer": None, "counts": {**{k: totals[k] for k in (
            "total", "succeeded", "failed", "skipped", "pending")}, "scored": 0},
        "success_rate": uncertainty.rate_ci(totals["succeeded"],
                                            rates.sent(totals["succeeded"], totals["failed"])),
        "score": None, "pass_rate": None, "delta_vs_previous": None,
        "pairwise_win_rate": max((w["win_rate"] for w in wins.values()), default=None),
        "spent_micros": totals["spent_micros"], "tokens_in": totals["tokens_in"],
        "tokens_out": totals["tokens_out"],
        "tokens": totals["tokens_in"] + totals["tokens_out"],
        "latency_p50_ms": latency.get(50), "latency_p95_ms": latency.get(95),
        "criteria": {}, "facets": None, "trend": [], "best_target_id": None,
        "worst_target_id": None,
        "targets": [{**{k: t[k] for k in (
            "target_id", "label", "model_id", "total", "succeeded", "failed", "skipped",
            "pending", "spent_micros", "tokens_in", "tokens_out", "latency_p50_ms",
            "latency_p95_ms")},
            "success_rate": uncertainty.rate_ci(
                t["succeeded"], rates.sent(t["succeeded"], t["failed"])),
            "scored": 0, "score": None, "pass_rate": None, "criteria": {},
            "pairwise": wins.get(t["target_id"])} for t in targets]}
    if scorer is not None and pooled is not None:
        _add_scores(session, run, scorer, dataset, body, pooled)
    ranked = [(t["score"]["mean"] if t["score"] else t["success_rate"]["rate"], t["target_id"])
              for t in body["targets"]]
    ranked = sorted((v, t) for v, t in ranked if v is not None)
    if ranked:
        body["best_target_id"], body["worst_target_id"] = ranked[-1][1], ranked[0][1]
    return body


def _add_scores(session: Session, run: Run, scorer: ScorerChoice, dataset: Dataset,
                body: dict[str, Any], pooled: ScorerChoice) -> None:
    """This run's numbers by `scorer` (one version); the trend over runs by `pooled`."""
    rows = scored_outputs(session, run, scorer)
    overall = _score_parts(rows)
    body["scorer"] = {"id": scorer.id, "name": scorer.name, "kind": scorer.kind,
                      "versions": list(scorer.version_numbers)}
    body["counts"]["scored"] = overall["scored"]
    body["score"], body["pass_rate"] = overall["score"], overall["pass_rate"]
    criteria = _criteria_rows(session, run, scorer)
    body["criteria"] = criteria_view([c for _, c in criteria])
    target_of = {r.output_id: r.target_id for r in rows}
    by_target: dict[int, list[Scored]] = {}
    for row in rows:
        by_target.setdefault(row.target_id, []).append(row)
    criteria_by_target: dict[int, list[dict[str, float]]] = {}
    for output_id, values in criteria:
        if output_id in target_of:
            criteria_by_target.setdefault(target_of[output_id], []).append(values)
    for target in body["targets"]:
        target.update(_score_parts(by_target.get(target["target_id"], [])))
        breakdown = criteria_view(criteria_by_target.get(target["target_id"], []))
        target["criteria"] = {name: entry["avg"] for name, entry in breakdown.items()}
    body["facets"] = facets_view(_facet_records(session, rows, dataset.kind))
    body["trend"] = _trend(session, run, pooled, dataset.id)
    if body["trend"]:  # this run's point is the version chosen, as the headline
        body["trend"][-1]["score"] = body["score"]
    body["delta_vs_previous"] = _delta(body["trend"])
