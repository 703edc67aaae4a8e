"""Judge-mode results: each question with every judge's ratings side by side, each judge's
mean rating per criterion, and how far the judges agree.

Ratings are read back on the 1-10 scale the judges used, from the normalised criteria a
score stores (1 + 9 x, rounded to 6 places so float residue never splits a rating in two).
A judge's "overall" is its overall rating when that is a criterion, else the mean of its
ratings. Agreement per criterion is Krippendorff's alpha at the interval level over every
question of the run (a question a judge failed on is missing for that judge); it needs
two judges. Means carry a bootstrap interval, each question its own case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import VersionCase
from assay.core.errors import NotFound
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project
from assay.core.runs.models import CellStatus, Output, Run
from assay.core.scoring.judge_calls import find_judges
from assay.core.scoring.models import RunScorer, Score, ScorerConfig, ScorerVersion
from assay.core.stats import krippendorff_alpha, mean_ci
from assay.scorers import registry
from assay.scorers.question_quality import HIGH, KIND, LOW, OVERALL, QuestionQuality

RESAMPLES = 1000  # per judge and criterion; a judge-mode page is polled while it scores
PLACES = 6
NOT_JUDGE_MODE = "This run has no question judgments: start judge mode from a dataset"


def rating(normalised: float) -> float:
    """A normalised criterion (0..1) back on the 1-10 scale."""
    return round(LOW + (HIGH - LOW) * normalised, PLACES)


def ratings_of(criteria: Mapping[str, float]) -> dict[str, float]:
    return {name: rating(value) for name, value in criteria.items()}


def overall_of(criteria: Mapping[str, float]) -> float | None:
    """One score's overall rating (1-10), from its normalised criteria."""
    if not criteria:
        return None
    if OVERALL in criteria:
        return rating(criteria[OVERALL])
    return round(sum(rating(v) for v in criteria.values()) / len(criteria), PLACES)


def judge_mode_version(session: Session, run: Run) -> tuple[ScorerVersion, QuestionQuality]:
    """The question-quality scorer version the run applies, built; NotFound for a run that
    is not a judge-mode run."""
    version = session.scalar(
        select(ScorerVersion).join(RunScorer, RunScorer.scorer_version_id == ScorerVersion.id)
        .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
        .where(RunScorer.run_id == run.id, ScorerConfig.kind == KIND)
        .order_by(RunScorer.position).limit(1))
    if version is None:
        raise NotFound(NOT_JUDGE_MODE)
    scorer = registry.build(KIND, version.params)
    assert isinstance(scorer, QuestionQuality)
    return version, scorer


def _judges(session: Session, project: Project, refs: Sequence[str]) -> list[dict[str, Any]]:
    found = find_judges(session, project.id, refs)
    return [{"ref": ref, "model_id": found[ref].id if ref in found else None,
             "name": found[ref].name if ref in found else f"Model {ref} (deleted)"}
            for ref in refs]


def _mean(values: Mapping[int, float]) -> dict[str, Any]:
    found = mean_ci({key: [value] for key, value in values.items()}, n_resamples=RESAMPLES)
    return {"mean": found.mean, "low": found.low, "high": found.high, "n": found.n_cases}


def _agreement(criterion: str, rows: list[list[float | None]]) -> dict[str, Any]:
    if len(rows) < 2 or not rows[0]:
        return {"criterion": criterion, "alpha": None, "n_units": 0, "n_values": 0}
    found = krippendorff_alpha(rows, level="interval")
    return {"criterion": criterion, "alpha": found.alpha, "n_units": found.n_units,
            "n_values": found.n_values}


def _aggregates(session: Session, run: Run, version: ScorerVersion,
                criteria: tuple[str, ...], judges: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, means per judge and agreement per criterion over all the run's scores."""
    questions = list(session.scalars(select(Output.id).where(
        Output.run_id == run.id, Output.status == CellStatus.succeeded).order_by(Output.id)))
    by_judge: dict[str, dict[int, dict[str, float]]] = {j["ref"]: {} for j in judges}
    failed: dict[str, int] = {j["ref"]: 0 for j in judges}
    for source, output_id, criteria_row, error in session.execute(
            select(Score.source, Score.output_id, Score.criteria, Score.error).where(
                Score.run_id == run.id, Score.scorer_version_id == version.id)
            .order_by(Score.id)):  # a stable order: the same interval on every read
        if source not in by_judge:
            continue
        if error is not None or not criteria_row:
            failed[source] += 1
        else:
            by_judge[source][output_id] = {**ratings_of(criteria_row),
                                           "_overall": overall_of(criteria_row) or 0.0}
    costs = {source: int(total or 0) for source, total in session.execute(
        select(Score.source, func.sum(Score.details[("usage", "cost_micros")].as_integer()))
        .where(Score.run_id == run.id, Score.scorer_version_id == version.id)
        .group_by(Score.source))}
    summaries = []
    for judge in judges:
        rated = by_judge[judge["ref"]]
        scored = len(rated)
        summaries.append({
            **judge, "scored": scored, "failed": failed[judge["ref"]],
            "pending": max(0, len(questions) - scored - failed[judge["ref"]]),
            "cost_micros": costs.get(judge["ref"], 0),
            "means": {c: _mean({o: r[c] for o, r in rated.items()}) for c in criteria},
            "overall": _mean({o: r["_overall"] for o, r in rated.items()})})
    agreement = [_agreement(c, [[by_judge[j["ref"]].get(o, {}).get(c) for o in questions]
                                for j in judges]) for c in (*criteria, "_overall")]
    overall = agreement.pop()
    overall["criterion"] = OVERALL
    expected = len(questions) * len(judges)
    scored = sum(s["scored"] for s in summaries)
    failures = sum(s["failed"] for s in summaries)
    return {"judges": summaries, "agreement": agreement, "overall_agreement": overall,
            "progress": {"questions": len(questions), "expected": expected, "scored": scored,
                         "failed": failures, "done": scored + failures >= expected}}


def _rating_view(score: Score | None, ref: str) -> dict[str, Any]:
    if score is None:
        return {"judge": ref, "status": "pending", "scores": {}, "overall": None,
                "justification": "", "rationales": {}, "error": None}
    ok = score.error is None and bool(score.criteria)
    rationales = (score.details or {}).get("rationales") or {}
    return {"judge": ref, "status": "scored" if ok else "failed",
            "scores": ratings_of(score.criteria) if ok else {},
            "overall": overall_of(score.criteria) if ok else None,
            "justification": score.rationale or "",
            "rationales": {str(k): str(v) for k, v in rationales.items()},
            "error": score.error}


def _page(session: Session, run: Run, version: ScorerVersion, refs: Sequence[str], page: int,
          page_size: int) -> Page[Any]:
    stmt = (select(Output.id, Output.case_id, Output.text)
            .join(VersionCase, (VersionCase.case_id == Output.case_id)
                  & (VersionCase.version_id == run.dataset_version_id))
            .where(Output.run_id == run.id).order_by(VersionCase.position))
    found = paginate(session, stmt, page, page_size, scalars=False, total=run.total)
    ids = [row[0] for row in found.items]
    scores: dict[tuple[int, str], Score] = {
        (s.output_id, s.source): s for s in session.scalars(select(Score).where(
            Score.output_id.in_(ids), Score.scorer_version_id == version.id))} if ids else {}
    offset = (page - 1) * page_size
    found.items = [{"output_id": output_id, "case_id": case_id, "number": offset + i + 1,
                    "question": text or "",
                    "ratings": [_rating_view(scores.get((output_id, ref)), ref)
                                for ref in refs]}
                   for i, (output_id, case_id, text) in enumerate(found.items)]
    return found


def judgments(session: Session, project: Project, run: Run, page: int,
              page_size: int) -> dict[str, Any]:
    """A page of questions with each judge's rating, plus the run-wide summary: judges
    (with their means), agreement per criterion and overall, and the scoring progress."""
    version, scorer = judge_mode_version(session, run)
    judges = _judges(session, project, scorer.judges)
    found = _page(session, run, version, scorer.judges, page, page_size)
    return {"run_id": run.id, "run_status": run.status,
            "dataset_version_id": run.dataset_version_id, "scorer_version_id": version.id,
            "criteria": list(scorer.criteria), "instruction": scorer.instruction,
            **_aggregates(session, run, version, scorer.criteria, judges),
            **asdict(found)}
