"""Scores people give by hand.

A reviewer scores an output with any manual scorer of the project, at any of its versions,
whether the run pinned it or not: reviewing is open to every output of the project (a run
pins its manual scorers to say which ones its reviewers are asked for). Each reviewer has
one score per output and scorer version (source "user:<id>"): a second save updates it and
a delete removes it. Every save and delete is audited with the values before and after.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.errors import Invalid, NotFound
from assay.core.projects.models import Project
from assay.core.reports import rollups
from assay.core.runs import cache
from assay.core.runs.models import CellStatus, Output, Run
from assay.core.scoring.apply import HUMAN_KINDS, CellScore, score_row
from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion
from assay.scorers.base import ParamsError
from assay.scorers.manual import ManualScorer

# What a new save replaces in an existing score (the rest is fixed by its key).
UPDATED = ("value", "passed", "criteria", "details", "comment", "updated_at")


@dataclass(frozen=True)
class Entry:
    """What a reviewer entered: the fields the scorer's scale asks for, and a comment."""

    rating: int | None = None
    passed: bool | None = None
    criteria: Mapping[str, int] = field(default_factory=dict)
    comment: str | None = None

    @property
    def entered(self) -> dict[str, Any]:
        return {"rating": self.rating, "passed": self.passed, "criteria": dict(self.criteria)}


def source_of(actor: User) -> str:
    return f"user:{actor.id}"


def manual_version(session: Session, project: Project,
                   version_id: int) -> tuple[ScorerConfig, ScorerVersion]:
    """A version of one of the project's scorers (else 404) that people score with."""
    row = session.execute(
        select(ScorerConfig, ScorerVersion)
        .join(ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id)
        .where(ScorerVersion.id == version_id, ScorerConfig.project_id == project.id)
    ).one_or_none()
    if row is None:
        raise NotFound("Scorer version not found")
    config, version = row
    if config.kind not in HUMAN_KINDS:
        raise Invalid("Only manual scorers take scores by hand", {"path": {
            "scorer_version_id": [f"The scorer {config.name!r} is of kind {config.kind!r}: "
                                  "Assay scores with it; choose a manual scorer"]}})
    return config, version


def output_of(session: Session, run: Run, output_id: int) -> Output:
    output = session.get(Output, output_id)
    if output is None or output.run_id != run.id:
        raise NotFound("Output not found")
    return output


def own_score(session: Session, output_id: int, version_id: int, actor: User) -> Score | None:
    return session.scalar(select(Score).where(
        Score.output_id == output_id, Score.scorer_version_id == version_id,
        Score.source == source_of(actor)))


def version_of_score(session: Session, score: Score) -> tuple[ScorerConfig, ScorerVersion]:
    version = session.get_one(ScorerVersion, score.scorer_version_id)
    return session.get_one(ScorerConfig, version.scorer_id), version


def snapshot(score: Score | None) -> dict[str, Any] | None:
    """A score as the audit trail keeps it: what was entered, its value and comment."""
    if score is None:
        return None
    entered = (score.details or {}).get("entered") or {}
    return {"value": score.value, "passed": score.passed, "rating": entered.get("rating"),
            "criteria": entered.get("criteria") or {}, "comment": score.comment}


def set_score(session: Session, actor: User, project: Project, run: Run, output_id: int,
              version_id: int, entry: Entry) -> tuple[Score, ScorerConfig, ScorerVersion]:
    """The actor's score of the output by this scorer version, created or updated. 422 for
    an archived scorer, an output without a reply, or values that do not fit the scale."""
    config, version = manual_version(session, project, version_id)
    if config.archived_at is not None:
        raise Invalid("This scorer is archived", {"path": {"scorer_version_id": [
            f"The scorer {config.name!r} is archived: restore it to score with it"]}})
    output = output_of(session, run, output_id)
    if output.status != CellStatus.succeeded:
        raise Invalid("Only an output with a reply can be scored", {"path": {"output_id": [
            f"This output is {output.status}; only succeeded outputs are scored"]}})
    try:
        result = ManualScorer(version.params).normalise(entry.rating, entry.passed,
                                                        entry.criteria)
    except ParamsError as exc:
        raise Invalid("The score does not fit this scorer's scale",
                      {"json": exc.errors}) from exc
    row = score_row(run.id, output.id, output.target_id, output.case_id,
                    CellScore(version.id, config.kind, result), actor.id, entry.comment or None)
    row["details"] = {"entered": entry.entered}
    score = own_score(session, output.id, version.id, actor)
    before = snapshot(score)
    if score is None:
        score = Score(**row)
        session.add(score)
    else:
        row["updated_at"] = utcnow()
        for name in UPDATED:
            setattr(score, name, row[name])
    session.flush()  # a concurrent first save of the same score fails here (unique key)
    audit.record(session, actor, "score.manual_set", "score", score.id, project.id, {
        "run_id": run.id, "output_id": output.id, "scorer_version_id": version.id,
        "before": before, "after": snapshot(score)})
    rollups.recount_case(session, version.id, output.target_id, output.case_id)
    cache.scores_changed(session, run.id)
    return score, config, version


def set_scores(session: Session, actor: User, project: Project, run: Run,
               output_ids: list[int], version_id: int,
               entry: Entry) -> list[tuple[Score, ScorerConfig, ScorerVersion]]:
    """The same score on each output (every repeat of a cell), all or none: the first
    output that cannot take it fails the whole call, and the caller rolls back."""
    if len(set(output_ids)) != len(output_ids):
        raise Invalid("An output is listed twice", {"json": {"output_ids": [
            "Each output once"]}})
    return [set_score(session, actor, project, run, output_id, version_id, entry)
            for output_id in output_ids]


def delete_score(session: Session, actor: User, project: Project, run: Run, output_id: int,
                 version_id: int) -> None:
    """Remove the actor's own score (undo); 404 when they have none there. Allowed on an
    archived scorer, so a reviewer can always take back what they gave."""
    _, version = manual_version(session, project, version_id)
    output = output_of(session, run, output_id)
    score = own_score(session, output.id, version.id, actor)
    if score is None:
        raise NotFound("You have no score of this output by this scorer")
    audit.record(session, actor, "score.manual_deleted", "score", score.id, project.id, {
        "run_id": run.id, "output_id": output.id, "scorer_version_id": version.id,
        "before": snapshot(score), "after": None})
    session.delete(score)
    rollups.recount_case(session, version.id, output.target_id, output.case_id)
    cache.scores_changed(session, run.id)
