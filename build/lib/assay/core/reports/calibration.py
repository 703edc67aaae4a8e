"""Judge calibration across the project's runs: for each version of each judge scorer,
how its judge models agree with each other (Krippendorff's alpha at the interval level,
Cohen's kappa on two judges' verdicts) and with people (each manual scorer's reviewers:
exact agreement, mean absolute difference, alpha and kappa), over every output of every
run it scored. rater_agreement.py does the arithmetic, as for one run's statistics; here
the units are the outputs of all the runs (an output belongs to one run, so pooling them
keeps each unit once)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.projects.models import Project
from assay.core.runs.models import Output
from assay.core.scoring.apply import HUMAN_KINDS, PAIR_KINDS
from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion
from assay.core.scoring.rater_agreement import judge_human, rater_agreement
from assay.core.scoring.run_scores import SourceScore


def _versions(session: Session, project: Project) -> dict[int, tuple[int, str, str, int]]:
    """version id -> (scorer id, name, kind, number) of the project's pointwise scorers."""
    return {v: (s, name, kind, number) for v, s, name, kind, number in session.execute(
        select(ScorerVersion.id, ScorerConfig.id, ScorerConfig.name, ScorerConfig.kind,
               ScorerVersion.number)
        .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
        .where(ScorerConfig.project_id == project.id, ScorerConfig.kind.not_in(PAIR_KINDS))
        .order_by(ScorerConfig.id, ScorerVersion.number))}


def _scores(session: Session, version_ids: list[int]
            ) -> tuple[dict[int, list[SourceScore]], dict[int, set[int]]]:
    """Every score with a source (a judge model, a reviewer) of the versions, by version;
    and the runs each version scored."""
    by_version: dict[int, list[SourceScore]] = {}
    runs: dict[int, set[int]] = {}
    if not version_ids:
        return by_version, runs
    for v, run, t, o, source, value, passed in session.execute(
            select(Score.scorer_version_id, Score.run_id, Output.target_id, Score.output_id,
                   Score.source, Score.value, Score.passed)
            .join(Output, Output.id == Score.output_id)
            .where(Score.scorer_version_id.in_(version_ids), Score.source != "")
            .order_by(Score.output_id)):
        by_version.setdefault(v, []).append(SourceScore(
            int(v), int(t), int(o), source, None if value is None else float(value),
            None if passed is None else bool(passed)))
        runs.setdefault(v, set()).add(int(run))
    return by_version, runs


def judge_calibration(session: Session, project: Project) -> dict[str, Any]:
    versions = _versions(session, project)
    scores, runs = _scores(session, list(versions))
    humans = [v for v, (_, _, kind, _) in versions.items() if kind in HUMAN_KINDS
              and scores.get(v)]
    items = []
    for v, (scorer_id, name, kind, number) in versions.items():
        judged = scores.get(v)
        if kind in HUMAN_KINDS or not judged:
            continue
        agreement = rater_agreement(judged)
        with_people = [found for h in humans for found in judge_human(judged, scores[h], h)]
        items.append({
            "scorer_id": scorer_id, "name": name, "kind": kind, "scorer_version_id": v,
            "version": number, "runs": len(runs[v]),
            "outputs": len({s.output_id for s in judged if s.value is not None}),
            "judges": sorted({s.source for s in judged if s.value is not None}),
            "agreement": None if agreement is None else {
                "raters": [asdict(r) for r in agreement.raters],
                "alpha": asdict(agreement.alpha),
                "kappa": None if agreement.kappa is None else asdict(agreement.kappa)},
            "judge_human": [{
                "judge": found.judge, "human_scorer_version_id": found.human_scorer_version_id,
                "human_name": versions[found.human_scorer_version_id][1],
                "human_version": versions[found.human_scorer_version_id][3],
                "reviewers": found.reviewers, **asdict(found.agreement)}
                for found in with_people]})
    return {"items": items}
