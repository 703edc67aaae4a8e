"""Scoring outputs that are already recorded: a trace run's recorded replies, a judge-mode
run's questions, and outputs recorded before a scorer was added. The shard path
(apply.py) scores replies as they land; this one pages through what has no score yet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.datasets.models import Case
from assay.core.runs.models import CellStatus, Output
from assay.core.scoring.apply import Applied, reference_of, subject_context
from assay.core.scoring.models import Score
from assay.scorers.base import Subject


@dataclass(frozen=True)
class Pending:
    """An output some of the run's scorers have not scored yet."""

    output_id: int
    target_id: int
    case_id: int
    subject: Subject
    missing: tuple[int, ...]  # scorer version ids without a score for it


def scored_messages(trace: Any, raw_request: Any, text: str | None) -> list[dict[str, Any]]:
    """The conversation a scorer sees: a trace's recorded messages, else the messages sent
    followed by the reply."""
    if isinstance(trace, dict) and isinstance(trace.get("messages"), list):
        return list(trace["messages"])  # the recorded trace, output included
    sent = raw_request.get("messages") if isinstance(raw_request, dict) else None
    return [*(sent if isinstance(sent, list) else []),
            {"role": "assistant", "content": text or ""}]


# What a scorer sees of a recorded output: select these (Output joined to its Case), then
# `subject_of` the row.
SUBJECT_COLUMNS = (Output.text, Output.turn, Output.latency_ms, Output.cost_micros,
                   Output.tokens_in, Output.tokens_out, Output.raw_request, Output.retrieved,
                   Case.input,
                   Case.expected, Case.trace, Case.tags, Case.difficulty)


def subject_of(row: Any) -> Subject:
    return Subject(
        output=row.text, input=row.input or {}, expected=row.expected,
        reference=reference_of(row.expected, row.turn),
        context=subject_context(row.expected, row.retrieved),
        retrieved=tuple(row.retrieved) if row.retrieved else None,
        messages=scored_messages(row.trace, row.raw_request, row.text),
        latency_ms=row.latency_ms, cost_micros=row.cost_micros, tokens_in=row.tokens_in,
        tokens_out=row.tokens_out, tags=tuple(row.tags or ()), difficulty=row.difficulty)


def unscored(session: Session, run_id: int, applied: Sequence[Applied], after_id: int,
             limit: int) -> tuple[list[Pending], int | None]:
    """Of the next `limit` succeeded outputs after `after_id` (id order), those that lack a
    score of one of `applied`; and the id to page on from (None: no more outputs)."""
    versions = [a.version_id for a in applied]
    if not versions:
        return [], None
    rows = session.execute(
        select(Output.id, Output.target_id, Output.case_id, *SUBJECT_COLUMNS)
        .join(Case, Case.id == Output.case_id)
        .where(Output.run_id == run_id, Output.status == CellStatus.succeeded,
               Output.id > after_id)
        .order_by(Output.id).limit(limit)).all()
    if not rows:
        return [], None
    have: dict[int, set[int]] = {}
    for output_id, version_id in session.execute(
            select(Score.output_id, Score.scorer_version_id).where(
                Score.output_id.in_([r.id for r in rows]),
                Score.scorer_version_id.in_(versions))):
        have.setdefault(output_id, set()).add(version_id)
    out = []
    for r in rows:
        missing = tuple(v for v in versions if v not in have.get(r.id, set()))
        if not missing:
            continue
        out.append(Pending(r.id, r.target_id, r.case_id, subject_of(r), missing))
    return out, rows[-1].id
