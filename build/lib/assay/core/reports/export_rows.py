"""The rows every export of a run is made of: its outputs in batches, in the order of the
outputs' cell key (case, target, repeat, turn; the unique index walks it), each with its
case, target, model and its scores grouped by the run's scorers. Batches are fetched by
keyset, so a 100,000-output run never sits in memory: one batch at a time does (the
session's identity map holds its objects weakly, so written batches are let go)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, select, tuple_
from sqlalchemy.orm import Session

from assay.core.datasets.models import Case
from assay.core.llm.models import ModelConfig
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.apply import PAIR_KINDS
from assay.core.scoring.models import RunScorer, Score, ScorerConfig, ScorerVersion
from assay.core.scoring.scale import rating_of, shown

BATCH = 1000


@dataclass(frozen=True)
class ExportScorer:
    id: int
    name: str
    kind: str
    version_ids: frozenset[int]
    versions: tuple[int, ...]  # the numbers the run pinned


@dataclass(frozen=True)
class ScoreResult:
    source: str
    version: int
    value: float | None
    passed: bool | None
    rationale: str
    error: str | None
    rating: float | None = None  # a reviewer's 1-5 rating, as entered

    @property
    def shown(self) -> str | None:
        return shown([self.rating]) if self.value is not None else None


@dataclass
class ScorerResult:
    """One scorer's verdict on one output: the mean value and the panel's verdict (every
    result must pass), as the reports count them, with each result."""

    scorer: ExportScorer
    results: list[ScoreResult] = field(default_factory=list)

    @property
    def value(self) -> float | None:
        values = [r.value for r in self.results if r.value is not None]
        return sum(values) / len(values) if values else None

    @property
    def shown(self) -> str | None:
        """On the scorer's own scale ("4/5") when its scores are ratings, else None."""
        return shown([r.rating for r in self.results if r.value is not None])

    @property
    def passed(self) -> bool | None:
        verdicts = [r.passed for r in self.results if r.passed is not None]
        return all(verdicts) if verdicts else None

    @property
    def failing(self) -> list[ScoreResult]:
        """Failed or errored: a score that could not be given is no pass."""
        return [r for r in self.results if r.passed is False or r.error is not None]


@dataclass(frozen=True)
class Row:
    output: Output
    case: Case
    target: RunTarget
    model: str | None
    scores: list[ScorerResult]


def run_scorers(session: Session, run: Run) -> list[ExportScorer]:
    """The run's scorers that score outputs one by one, in the run's order; every version
    of each is read (a person may score with a newer one later)."""
    pinned = session.execute(
        select(ScorerConfig.id, ScorerConfig.name, ScorerConfig.kind, ScorerVersion.number)
        .join(ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id)
        .join(RunScorer, RunScorer.scorer_version_id == ScorerVersion.id)
        .where(RunScorer.run_id == run.id, ScorerConfig.kind.not_in(PAIR_KINDS))
        .order_by(RunScorer.position)).all()
    ids = [row.id for row in pinned]
    versions: dict[int, set[int]] = {}
    for version_id, scorer_id in session.execute(
            select(ScorerVersion.id, ScorerVersion.scorer_id)
            .where(ScorerVersion.scorer_id.in_(ids))):
        versions.setdefault(scorer_id, set()).add(version_id)
    out: dict[int, ExportScorer] = {}
    for row in pinned:
        found = out.get(row.id)
        numbers = (found.versions if found else ()) + (row.number,)
        out[row.id] = ExportScorer(row.id, row.name, row.kind,
                                   frozenset(versions.get(row.id, ())), numbers)
    return list(out.values())


def _scores(session: Session, output_ids: list[int], scorers: list[ExportScorer]
            ) -> dict[int, list[ScorerResult]]:
    by_version = {v: s for s in scorers for v in s.version_ids}
    numbers = dict(session.execute(select(ScorerVersion.id, ScorerVersion.number)
                                   .where(ScorerVersion.id.in_(list(by_version)))).all()) \
        if by_version else {}
    out = {o: [ScorerResult(s) for s in scorers] for o in output_ids}
    if not by_version:
        return out
    position = {s.id: i for i, s in enumerate(scorers)}
    for score in session.scalars(
            select(Score).where(Score.output_id.in_(output_ids),
                                Score.scorer_version_id.in_(list(by_version)))
            .order_by(Score.output_id, Score.scorer_version_id, Score.source)):
        scorer = by_version[score.scorer_version_id]
        out[score.output_id][position[scorer.id]].results.append(ScoreResult(
            score.source, numbers[score.scorer_version_id], score.value, score.passed,
            score.rationale or "", score.error, rating_of(score.kind, score.details)))
    return out


def rows(session: Session, run: Run, scorers: list[ExportScorer],
         target_id: int | None = None) -> Iterator[list[Row]]:
    """Batches of the run's outputs (of one target, when given), in cell-key order."""
    models = dict(session.execute(
        select(RunTarget.id, ModelConfig.name)
        .join(ModelConfig, ModelConfig.id == RunTarget.model_id)
        .where(RunTarget.run_id == run.id)).all())
    key = (Output.case_id, Output.target_id, Output.repeat, Output.turn)
    conditions: list[ColumnElement[bool]] = [Output.run_id == run.id]
    if target_id is not None:
        conditions.append(Output.target_id == target_id)
    after: tuple[int, int, int, int] | None = None
    while True:
        stmt = (select(Output, Case, RunTarget).join(Case, Case.id == Output.case_id)
                .join(RunTarget, RunTarget.id == Output.target_id).where(*conditions))
        if after is not None:
            stmt = stmt.where(tuple_(*key) > tuple_(*after))
        batch = session.execute(stmt.order_by(*key).limit(BATCH)).all()
        if not batch:
            return
        last = batch[-1][0]
        after = (last.case_id, last.target_id, last.repeat, last.turn)
        scores = _scores(session, [r[0].id for r in batch], scorers)
        yield [Row(o, c, t, models.get(t.id), scores[o.id]) for o, c, t in batch]
        if len(batch) < BATCH:
            return
