"""A run's statistics per target and scorer version (DESIGN §6): every number with its
uncertainty.

- n_outputs: the target's succeeded outputs; n_scored: outputs with a value from the
  scorer; n_failed: score rows that failed (value NULL, with an error);
- mean: the mean of case means with a 95% bootstrap interval clustered by case, so a
  case's repeats and conversation turns are resampled together (see run_scores for how an
  output's scores and a repeat's outputs are reduced); n_values counts outputs;
- pass_rate: outputs that passed over outputs with a verdict, with the Wilson interval;
- criteria: avg, min, max and std of each criterion over outputs;
- flakiness (cases run more than once): cases whose repeats disagree, the flakiest first;
- agreement between the scorer's sources and, for judges, against people who scored the
  same outputs with a manual scorer (see rater_agreement).

A scorer without scores yet gives n = 0 and None for every number, never an error."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from assay.core import stats
from assay.core.runs import cache
from assay.core.runs.models import Run
from assay.core.runs.results import targets_of
from assay.core.scoring import run_scores
from assay.core.scoring.rater_agreement import (
    JudgeHuman,
    RaterAgreement,
    judge_human,
    rater_agreement,
)
from assay.core.scoring.run_scorers import ScorerInfo, scorers_of_run
from assay.core.scoring.run_scores import RepeatRow, SourceScore, group_by

CONFIDENCE = 0.95
RESAMPLES = 2000
FLAKY_LISTED = 50  # flaky cases listed per target and scorer, the widest spread first
# Repeat means are averages computed in the database: a difference below this is rounding.
FLAKY_TOLERANCE = 1e-9


@dataclass(frozen=True)
class TargetStatistics:
    target_id: int
    scorer_version_id: int
    n_outputs: int
    n_scored: int
    n_failed: int
    mean: stats.MeanCI
    pass_rate: stats.Proportion
    criteria: dict[str, stats.CriterionSummary]
    flakiness: stats.FlakinessReport | None  # None unless some case has two repeats
    agreement: RaterAgreement | None  # None with fewer than two raters
    judge_human: tuple[JudgeHuman, ...]


@dataclass(frozen=True)
class RunStatistics:
    run_id: int
    scorers: tuple[ScorerInfo, ...]
    items: tuple[TargetStatistics, ...]  # target by target, each with every scorer


def mean_of(rows: Sequence[RepeatRow]) -> stats.MeanCI:
    found = stats.mean_ci(run_scores.values_by_case(rows), confidence=CONFIDENCE,
                          n_resamples=RESAMPLES)
    return replace(found, n_values=sum(row.valued for row in rows))


def pass_rate_of(rows: Sequence[RepeatRow]) -> stats.Proportion:
    return stats.wilson_interval(sum(row.passes for row in rows),
                                 sum(row.verdicts for row in rows), CONFIDENCE)


def flakiness_of(rows: Sequence[RepeatRow]) -> stats.FlakinessReport | None:
    by_case: dict[Hashable, list[float]] = {
        case: values for case, values in run_scores.values_by_case(rows).items()}
    if not any(len(values) > 1 for values in by_case.values()):
        return None
    found = stats.flakiness(by_case, tolerance=FLAKY_TOLERANCE, confidence=CONFIDENCE)
    flaky = sorted((case for case in found.cases if case.flaky),
                   key=lambda case: (-case.spread, str(case.case)))
    return replace(found, cases=tuple(flaky[:FLAKY_LISTED]))


def run_statistics(session: Session, run: Run,
                   version_id: int | None = None) -> RunStatistics:
    """Every target with every scorer of the run (or only `version_id`, which the caller
    has checked belongs to the run)."""
    everything = scorers_of_run(session, run)
    scorers = [info for info in everything
               if version_id is None or info.version_id == version_id]
    ids = [info.version_id for info in scorers]
    repeats = group_by(run_scores.repeat_rows(session, run.id, ids), "version_id", "target_id")
    criteria = run_scores.criteria_by_output(session, run.id, ids)
    succeeded = run_scores.succeeded_outputs(session, run.id)
    sources = run_scores.sources(session, run.id, ids)
    humans = [info for info in everything if info.human]
    # judges are compared with people only where people scored
    judges = [info.version_id for info in scorers
              if humans and not info.human and sources.get(info.version_id)]
    rated = [vid for vid in ids if len(sources.get(vid, ())) > 1 or vid in judges]
    if judges:
        rated += [info.version_id for info in humans if info.version_id not in rated]
    by_source = group_by(run_scores.source_scores(session, run.id, rated),
                         "version_id", "target_id")
    items = []
    for target in targets_of(session, run):
        for info in scorers:
            rows = repeats.get((info.version_id, target.id), [])
            scored = by_source.get((info.version_id, target.id), [])
            items.append(TargetStatistics(
                target_id=target.id, scorer_version_id=info.version_id,
                n_outputs=succeeded.get(target.id, 0),
                n_scored=sum(row.valued for row in rows),
                n_failed=sum(row.failed_scores for row in rows),
                mean=mean_of(rows), pass_rate=pass_rate_of(rows),
                criteria=stats.criterion_breakdown(
                    criteria.get((info.version_id, target.id), [])),
                flakiness=flakiness_of(rows),
                agreement=rater_agreement(scored) if scored else None,
                judge_human=_judge_human(info, judges, humans, scored, by_source, target.id)))
    return RunStatistics(run.id, tuple(scorers), tuple(items))


def _judge_human(info: ScorerInfo, judges: list[int], humans: list[ScorerInfo],
                 scored: list[SourceScore],
                 by_source: dict[tuple[object, ...], list[SourceScore]],
                 target_id: int) -> tuple[JudgeHuman, ...]:
    if info.version_id not in judges:
        return ()
    found: list[JudgeHuman] = []
    for human in humans:
        found += judge_human(scored, by_source.get((human.version_id, target_id), []),
                             human.version_id)
    return tuple(found)


def item_view(item: TargetStatistics) -> dict[str, Any]:
    """One target and scorer's statistics as JSON-ready values (the API's item less the
    target's label and model, which can change without the numbers)."""
    flakiness = None
    if item.flakiness is not None:
        flakiness = {**asdict(item.flakiness), "cases": [
            {**asdict(case), "case_id": case.case} for case in item.flakiness.cases]}
    return {
        **asdict(item), "flakiness": flakiness,
        "criteria": [{"name": name, **asdict(summary)}
                     for name, summary in item.criteria.items()],
        "judge_human": [{"judge": found.judge,
                         "human_scorer_version_id": found.human_scorer_version_id,
                         "reviewers": found.reviewers, **asdict(found.agreement)}
                        for found in item.judge_human]}


def statistics_view(session: Session, run: Run, version_id: int | None = None
                    ) -> tuple[list[ScorerInfo], list[dict[str, Any]]]:
    """The scorers (read as they are now) and item_view of every item of run_statistics,
    kept for a stopped run until its scores change (runs/cache.py)."""
    scorers = [info for info in scorers_of_run(session, run)
               if version_id is None or info.version_id == version_id]
    key = "statistics:" + ",".join(str(info.version_id) for info in scorers)
    items = cache.kept_json(session, run, key, lambda: [
        item_view(item) for item in run_statistics(session, run, version_id).items])
    return scorers, items
