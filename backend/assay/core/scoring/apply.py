"""Scores as outputs land: the run's scorers are built once per shard, applied to each
finished cell inside the shard (judges through the same LLM client), and written in the
transaction that records the cell, so an output and its scores land together, once."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from assay.core import bulk, ledger
from assay.core.base import utcnow
from assay.core.reports import rollups
from assay.core.retrieval.context import context_text
from assay.core.scoring.models import RunScorer, Score, ScorerConfig, ScorerVersion
from assay.scorers import registry
from assay.scorers.base import Context, ParamsError, Scorer, ScoreResult, Subject

log = logging.getLogger(__name__)
HUMAN_KINDS = frozenset({"manual"})  # people score these
PAIR_KINDS = frozenset({"pairwise_judge"})  # compare two outputs, after both exist


@dataclass(frozen=True)
class Applied:
    """A scorer version the engine applies to each output."""

    version_id: int
    kind: str
    scorer: Scorer


@dataclass(frozen=True)
class CellScore:
    version_id: int
    kind: str
    result: ScoreResult


def run_scorers(session: Session, run_id: int) -> list[Applied]:
    """The run's pointwise scorers, in their order, built from their pinned versions."""
    rows = session.execute(
        select(ScorerVersion.id, ScorerConfig.kind, ScorerVersion.params)
        .join(RunScorer, RunScorer.scorer_version_id == ScorerVersion.id)
        .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
        .where(RunScorer.run_id == run_id).order_by(RunScorer.position)).all()
    applied = []
    for version_id, kind, params in rows:
        if kind in HUMAN_KINDS or kind in PAIR_KINDS:
            continue
        try:
            applied.append(Applied(version_id, kind, registry.build(kind, params)))
        except ParamsError as exc:  # validated on save: only a kind changed since
            log.error("scorer version %s (%s) no longer builds: %s", version_id, kind, exc)
    return applied


def has_scorers(session: Session, run_id: int) -> bool:
    return session.scalar(select(RunScorer.run_id).where(RunScorer.run_id == run_id)
                          .limit(1)) is not None


def reference_of(expected: Mapping[str, Any] | None, turn: int) -> str | None:
    """The expected text of a cell: the turn's ground truth for conversations, else the
    case's expected output."""
    if not expected:
        return None
    turns = expected.get("turns")
    if isinstance(turns, list):
        value = turns[turn] if turn < len(turns) else None
    else:
        value = expected.get("output", expected.get("answer"))
    return value if isinstance(value, str) else None


def grounding_of(expected: Mapping[str, Any] | None) -> str | None:
    """What RAG metrics judge groundedness against: the case's `expected.context`."""
    value = (expected or {}).get("context")
    return value if isinstance(value, str) and value.strip() else None


def subject_context(expected: Mapping[str, Any] | None,
                    retrieved: Sequence[Mapping[str, Any]] | None) -> str | None:
    """A RAG cell is judged against the chunks it was given; any other against the case's
    own context."""
    return context_text(retrieved) if retrieved else grounding_of(expected)


def reply_subject(case_input: Mapping[str, Any], expected: Mapping[str, Any] | None,
                  turn: int, messages: Sequence[dict[str, Any]], output: str | None,
                  retrieved: Sequence[Mapping[str, Any]] | None = None,
                  **measured: Any) -> Subject:
    """What scorers see of one reply to a case: the conversation sent, then the reply
    (`measured`: its latency, cost and tokens)."""
    return Subject(output=output, input=case_input, expected=expected,
                   reference=reference_of(expected, turn),
                   context=subject_context(expected, retrieved),
                   retrieved=tuple(retrieved) if retrieved else None,
                   messages=[*messages, {"role": "assistant", "content": output or ""}],
                   **measured)


async def score_subject(applied: Sequence[Applied], subject: Subject, ctx: Context,
                        tab: ledger.Tab | None = None) -> tuple[CellScore, ...]:
    """Every scorer's results for one output; a scorer that raises gives a failed score
    (a bug in one scorer must not lose the output or the other scores). `tab` counts each
    judge call as its reply lands: what a stop that cuts the output's other judges (and so
    loses its scores) leaves billed."""
    if tab is not None and ctx.judge is not None:
        ctx = replace(ctx, judge=ledger.Metered(ctx.judge, tab))
    out: list[CellScore] = []
    for item in applied:
        try:
            results = await item.scorer.score(subject, ctx)
        except Exception as exc:
            log.exception("scorer %s (%s) failed", item.version_id, item.kind)
            results = [ScoreResult.failed(f"internal error in the {item.kind} scorer: "
                                          f"{type(exc).__name__}: {exc}")]
        out.extend(CellScore(item.version_id, item.kind, r) for r in results)
    return tuple(out)


def score_row(run_id: int, output_id: int, target_id: int, case_id: int, score: CellScore,
              author_id: int | None = None, comment: str | None = None,
              now: datetime | None = None) -> dict[str, Any]:
    """The scores row of one result for the output `output_id` of the target and case
    given (built for every scored reply: kept cheap, no asdict)."""
    r = score.result
    now = now or utcnow()
    source = f"user:{author_id}" if author_id is not None else (r.judge_model or "")
    return {"run_id": run_id, "output_id": output_id, "target_id": target_id,
            "case_id": case_id, "scorer_version_id": score.version_id,
            "kind": score.kind, "source": source, "value": r.value, "passed": r.passed,
            "criteria": dict(r.criteria), "rationale": r.rationale,
            "evidence": [{"message_index": e.message_index, "start": e.start, "end": e.end,
                          "text": e.text, "label": e.label} for e in r.evidence],
            "severity": r.severity, "flags": list(r.flags), "details": dict(r.details),
            "error": r.error, "author_id": author_id, "comment": comment, "created_at": now,
            "updated_at": now}


_SCORES = cast(Table, Score.__table__)


def insert_scores(session: Session, rows: list[dict[str, Any]]) -> None:
    """One executemany, and the report rollups moved by the same rows; the caller commits
    (with the outputs the scores belong to)."""
    if rows:
        bulk.insert_rows(session.connection(), _SCORES, rows)  # Core: no ORM
        rollups.add_scores(session, rows)
