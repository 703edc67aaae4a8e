"""A run's headline scorer: the one whose score and pass rate the run page and the run
report lead with, and name (issue 33 items 6 and 7).

A scorer the user pinned on the run comes first, while the run still holds it. Otherwise
the composite: a rubric judge's score already weighs its criteria. Otherwise a scorer
whose scores on the run discriminate (more than one distinct value), so a report never
opens on a check every output passed; and only then the run's first pointwise scorer."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.errors import Invalid
from assay.core.runs.models import Run
from assay.core.scoring.apply import PAIR_KINDS
from assay.core.scoring.models import RunScorer, Score, ScorerConfig, ScorerVersion

COMPOSITE_KINDS = ("llm_judge", "rag_metrics")  # weigh several criteria into one score


def run_scorers(session: Session, run_id: int) -> list[tuple[int, str]]:
    """(scorer id, kind) of the run's pointwise scorers, in the run's order, once each."""
    rows = session.execute(
        select(ScorerConfig.id, ScorerConfig.kind, func.min(RunScorer.position))
        .join(ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id)
        .join(RunScorer, RunScorer.scorer_version_id == ScorerVersion.id)
        .where(RunScorer.run_id == run_id, ScorerConfig.kind.not_in(PAIR_KINDS))
        .group_by(ScorerConfig.id, ScorerConfig.kind).order_by(func.min(RunScorer.position)))
    return [(scorer_id, kind) for scorer_id, kind, _ in rows]


def _discriminating(session: Session, run_id: int, scorer_ids: list[int]) -> set[int]:
    """The scorers whose values on the run are not all the same."""
    if not scorer_ids:
        return set()
    rows = session.execute(
        select(ScorerVersion.scorer_id)
        .join(Score, Score.scorer_version_id == ScorerVersion.id)
        .where(Score.run_id == run_id, ScorerVersion.scorer_id.in_(scorer_ids),
               Score.value.is_not(None))
        .group_by(ScorerVersion.scorer_id)
        .having(func.count(func.distinct(Score.value)) > 1))
    return {scorer_id for (scorer_id,) in rows}


def headline_scorer(session: Session, run: Run) -> int | None:
    """The scorer the run's headline reads (see the module's docstring); None without one."""
    scorers = run_scorers(session, run.id)
    ids = [scorer_id for scorer_id, _ in scorers]
    if run.headline_scorer_id in ids:
        return run.headline_scorer_id
    composite = [scorer_id for scorer_id, kind in scorers if kind in COMPOSITE_KINDS]
    spread = _discriminating(session, run.id, ids)
    for pool in ([c for c in composite if c in spread], [i for i in ids if i in spread],
                 composite, ids):
        if pool:
            return pool[0]
    return None


def pin_headline(session: Session, actor: User | None, run: Run,
                 scorer_id: int | None) -> Run:
    """Pin `scorer_id` as the run's headline (None: back to the default). It must be one
    of the run's own pointwise scorers: a headline is about this run's outputs."""
    if scorer_id is not None and scorer_id not in dict(run_scorers(session, run.id)):
        raise Invalid("Not a scorer of this run", {"json": {"scorer_id": [
            "Choose one of the run's scorers that score outputs one by one"]}})
    before = run.headline_scorer_id
    run.headline_scorer_id = scorer_id
    audit.record(session, actor, "run.headline_pinned", "run", run.id, run.project_id,
                 {"from": before, "to": scorer_id})
    session.flush()
    return run
