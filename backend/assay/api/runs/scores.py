"""Scores reviewers give outputs by hand (reviewers and above), and the one JSON view of a
score, shared with the output detail."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from assay.api import preconditions
from assay.api.base import commit, project_access, runtime, session, user
from assay.api.runs.blueprint import blp
from assay.api.runs.scores_schemas import (
    ManualScoreManySchema,
    ManualScoreSchema,
    ScoreListSchema,
    ScoreSchema,
)
from assay.core.auth.models import User
from assay.core.errors import Conflict
from assay.core.projects.models import Role
from assay.core.runs import service as runs
from assay.core.runs.output_detail import SCORE_COLUMNS
from assay.core.scoring import manual
from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion
from assay.jobs.queues import enqueue_warm

ONE = "/<int:run_id>/outputs/<int:output_id>/scores/<int:scorer_version_id>"


def score_view(score: Score, config: ScorerConfig, version: ScorerVersion,
               author: User | None) -> dict[str, Any]:
    return {**{c: getattr(score, c) for c in SCORE_COLUMNS}, "scorer_id": config.id,
            "scorer_name": config.name, "version": version.number,
            "author_name": (author.name or author.email) if author else None}


@blp.put(ONE)
@blp.arguments(ManualScoreSchema)
@blp.response(200, ScoreSchema)
@preconditions.write()
def put_score(data: dict[str, Any], project_id: int, run_id: int, output_id: int,
              scorer_version_id: int) -> Any:
    """Your score of this output by a manual scorer of the project (any of its versions,
    pinned by the run or not); saving again updates it. 422 when the values do not fit the
    scorer's scale (errors name the field), the scorer is archived or not manual, or the
    output has no reply. If-Match is the score's `row_version` ("0": you have none yet): a
    save from a stale tab is refused with 412 and your current score (null: none)."""
    project, _ = project_access(project_id, Role.reviewer)
    run = runs.get_run(session(), project, run_id)
    entry = manual.Entry(**data)
    for attempt in range(2):
        try:
            _guard_own_score(output_id, scorer_version_id)
            score, config, version = manual.set_score(session(), user(), project, run,
                                                      output_id, scorer_version_id, entry)
            commit()
            enqueue_warm(runtime(), run.id)  # the run's kept numbers, filled again
            return preconditions.tagged(score_view(score, config, version, user()), score)
        except IntegrityError as exc:  # a concurrent first save: seen (and guarded) on retry
            session().rollback()
            if attempt:
                raise Conflict("The score changed meanwhile; try again",
                               code="SCORE_CONFLICT") from exc
    raise AssertionError("unreachable")


def _guard_own_score(output_id: int, scorer_version_id: int, *, removing: bool = False) -> None:
    """412 unless If-Match names the version of the caller's score there (0: none). Removing
    what is not there is left to the 404 of the delete."""
    score = manual.own_score(session(), output_id, scorer_version_id, user())
    if score is None:
        if not removing:
            preconditions.expect(0, lambda: None)
        return

    def current() -> dict[str, Any]:
        config, version = manual.version_of_score(session(), score)
        return score_view(score, config, version, user())
    preconditions.guard(score, current)


@blp.put("/<int:run_id>/scores/<int:scorer_version_id>")
@blp.arguments(ManualScoreManySchema)
@blp.response(200, ScoreListSchema)
def put_scores(data: dict[str, Any], project_id: int, run_id: int,
               scorer_version_id: int) -> Any:
    """Your same score of several outputs of this run at once (a cell's repeats), all or
    none: 422 or 404 for any output leaves every one as it was."""
    project, _ = project_access(project_id, Role.reviewer)
    run = runs.get_run(session(), project, run_id)
    output_ids = data.pop("output_ids")
    versions = data.pop("row_versions")
    entry = manual.Entry(**data)
    try:
        if versions is not None:
            _guard_own_scores(run, output_ids, versions, scorer_version_id)
        saved = manual.set_scores(session(), user(), project, run, output_ids,
                                  scorer_version_id, entry)
        commit()
        enqueue_warm(runtime(), run.id)
    except IntegrityError as exc:  # a concurrent first save of one of them
        session().rollback()
        raise Conflict("A score changed meanwhile; try again", code="SCORE_CONFLICT") from exc
    return {"items": [score_view(score, config, version, user())
                      for score, config, version in saved]}


def _guard_own_scores(run: Any, output_ids: list[int], versions: list[int],
                      scorer_version_id: int) -> None:
    """412, with the caller's current scores of these outputs, unless each is at the
    version the body names (0: none yet)."""
    def current() -> list[dict[str, Any] | None]:
        now = [manual.own_score(session(), o, scorer_version_id, user()) for o in output_ids]
        return [score_view(s, *manual.version_of_score(session(), s), user()) if s else None
                for s in now]

    for output_id, version in zip(output_ids, versions, strict=True):
        manual.output_of(session(), run, output_id)  # 404 before 412: not one of this run's
        score = manual.own_score(session(), output_id, scorer_version_id, user())
        if score is None:
            if version != 0:  # deleted meanwhile (from another tab)
                raise preconditions.refusal(version, 0, current)
            continue
        preconditions.guard_at(score, version, current)


@blp.delete(ONE)
@blp.response(204)
@preconditions.write(204)
def delete_score(project_id: int, run_id: int, output_id: int, scorer_version_id: int) -> Any:
    """Remove your own score (undo); 404 when you have none there. If-Match is the score's
    `row_version`: an undo from a stale tab does not remove a score saved since (412)."""
    project, _ = project_access(project_id, Role.reviewer)
    run = runs.get_run(session(), project, run_id)
    manual.output_of(session(), run, output_id)  # 404 before 412: not one of this run's
    _guard_own_score(output_id, scorer_version_id, removing=True)
    manual.delete_score(session(), user(), project, run, output_id, scorer_version_id)
    commit()
    enqueue_warm(runtime(), run.id)
    return None
