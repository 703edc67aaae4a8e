"""One case of a run seen whole, for the side-by-side viewer: the case (input, expected,
trace), every target's outputs for it (every repeat and conversation turn) with their
scores, and the previous and next case of the run for navigation.

Cases are ordered as the run planned them: by their position in the dataset version the
run was made from (planning gives a run every case of that version). A case outside the
run is a 404 naming the run, whether it does not exist, belongs to another project or to
another dataset.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.errors import NotFound
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.runs.results import targets_of
from assay.core.scoring.backfill import scored_messages
from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion

ScoreRow = tuple[Score, ScorerConfig, ScorerVersion, User | None]


@dataclass
class TargetOutputs:
    target: RunTarget
    outputs: list[tuple[Output, list[ScoreRow]]] = field(default_factory=list)


@dataclass
class CaseView:
    run: Run
    case: Case
    dataset_kind: str
    position: int  # 1-based, in the run's dataset version
    total: int
    previous_case_id: int | None
    next_case_id: int | None
    targets: list[TargetOutputs]


def _position(session: Session, run: Run, case_id: int) -> int:
    position = session.scalar(select(VersionCase.position).where(
        VersionCase.version_id == run.dataset_version_id, VersionCase.case_id == case_id))
    if position is None:
        raise NotFound(f"Case {case_id} is not in run {run.id}: the run covers the cases of "
                       "its dataset version only")
    return position


def _neighbours(session: Session, run: Run, position: int) -> tuple[int | None, int | None]:
    version = VersionCase.version_id == run.dataset_version_id
    previous = session.scalar(select(VersionCase.case_id).where(
        version, VersionCase.position < position).order_by(VersionCase.position.desc())
        .limit(1))
    following = session.scalar(select(VersionCase.case_id).where(
        version, VersionCase.position > position).order_by(VersionCase.position).limit(1))
    return previous, following


def scores_of(session: Session, output_ids: list[int]) -> dict[int, list[ScoreRow]]:
    """output id -> its scores with scorer, version and author, by scorer name, version,
    source (the order of the output detail)."""
    if not output_ids:
        return {}
    rows = session.execute(
        select(Score, ScorerConfig, ScorerVersion, User)
        .join(ScorerVersion, ScorerVersion.id == Score.scorer_version_id)
        .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
        .outerjoin(User, User.id == Score.author_id)
        .where(Score.output_id.in_(output_ids))
        .order_by(ScorerConfig.name, ScorerVersion.number, Score.source, Score.id))
    out: dict[int, list[ScoreRow]] = {}
    for score, config, version, author in rows:
        out.setdefault(score.output_id, []).append((score, config, version, author))
    return out


def case_view(session: Session, run: Run, case_id: int) -> CaseView:
    position = _position(session, run, case_id)
    case = session.get(Case, case_id)
    if case is None:  # unreachable while version_cases keeps its foreign key
        raise NotFound(f"Case {case_id} not found")
    kind = session.scalar(select(Dataset.kind).join(
        DatasetVersion, DatasetVersion.dataset_id == Dataset.id).where(
        DatasetVersion.id == run.dataset_version_id)) or "questions"
    before = session.scalar(select(func.count()).select_from(VersionCase).where(
        VersionCase.version_id == run.dataset_version_id, VersionCase.position < position))
    total = session.scalar(select(func.count()).select_from(VersionCase).where(
        VersionCase.version_id == run.dataset_version_id))
    previous, following = _neighbours(session, run, position)
    outputs = list(session.scalars(
        select(Output).where(Output.run_id == run.id, Output.case_id == case_id)
        .order_by(Output.target_id, Output.repeat, Output.turn)))
    scores = scores_of(session, [o.id for o in outputs])
    by_target = {t.id: TargetOutputs(t) for t in targets_of(session, run)}
    for output in outputs:
        if (found := by_target.get(output.target_id)) is not None:
            found.outputs.append((output, scores.get(output.id, [])))
    return CaseView(run=run, case=case, dataset_kind=kind, position=int(before or 0) + 1,
                    total=int(total or 0), previous_case_id=previous,
                    next_case_id=following, targets=list(by_target.values()))


def conversation(view: CaseView, out: Output, rows: list[ScoreRow]) -> list[Any] | None:
    """The messages a scorer's evidence indexes (as the scoring job builds them: the recorded
    trace, else the messages sent followed by the reply), for outputs whose scores point at
    a message; None otherwise (the trace itself is in the case)."""
    if view.case.trace is not None or not any(
            e.get("message_index") is not None for s in rows for e in (s[0].evidence or [])):
        return None
    return scored_messages(None, out.raw_request, out.text)


def as_dict(view: CaseView, output: Any, score: Any) -> dict[str, Any]:
    """The JSON shape, with the API's own output and score views passed in."""
    case = view.case
    return {
        "run_id": view.run.id, "run_name": view.run.name, "dataset_kind": view.dataset_kind,
        "position": view.position, "total": view.total,
        "previous_case_id": view.previous_case_id, "next_case_id": view.next_case_id,
        "case": {"id": case.id, "input": case.input, "expected": case.expected,
                 "trace": case.trace, "tags": case.tags or [], "difficulty": case.difficulty,
                 "metadata": case.meta or {}},
        "targets": [{"target_id": t.target.id, "label": t.target.label,
                     "model_id": t.target.model_id,
                     "outputs": [{**output(o, t.target), "scores": [score(*s) for s in rows],
                                  "conversation": conversation(view, o, rows)}
                                 for o, rows in t.outputs]}
                    for t in view.targets],
    }
