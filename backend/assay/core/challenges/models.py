"""EvalArena: challenges (read-only global content loaded by `assay seed`), their traces
(dev visible, test hidden: never serialised to any client), and each user's attempts and
drafts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ColumnElement, Float, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base, utcnow
from assay.core.row_versions import Versioned


class Challenge(Base):
    __tablename__ = "arena_challenges"

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    position: Mapped[int] = mapped_column(default=0)  # library order (file name order)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text)
    difficulty: Mapped[str] = mapped_column(String(8))
    category: Mapped[str] = mapped_column(String(16))
    start_mode: Mapped[str] = mapped_column(String(8))
    pass_threshold: Mapped[float] = mapped_column(Float)
    # {system_prompt, tools: [ToolDefinition], contract: [clause]}
    context: Mapped[dict[str, Any]] = mapped_column(JSON)
    # baseline/default/hint x rules/judge texts ("" when absent)
    texts: Mapped[dict[str, Any]] = mapped_column(JSON)
    dev_count: Mapped[int] = mapped_column(default=0)
    test_count: Mapped[int] = mapped_column(default=0)
    content_hash: Mapped[str] = mapped_column(String(64))
    retired_at: Mapped[datetime | None]  # its file is gone: kept for the attempts on it
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class ChallengeTrace(Base):
    __tablename__ = "arena_traces"
    __table_args__ = (Index("ix_arena_traces_challenge_split", "challenge_id", "split",
                            "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    challenge_id: Mapped[str] = mapped_column(
        ForeignKey("arena_challenges.id", ondelete="CASCADE"))
    split: Mapped[str] = mapped_column(String(8))  # dev | test (hidden)
    key: Mapped[str] = mapped_column(String(80))  # the trace id in the file
    position: Mapped[int]
    messages: Mapped[list[Any]] = mapped_column(JSON)
    label: Mapped[str] = mapped_column(String(8))  # pass | fail
    violated_clause: Mapped[int | None]
    severity: Mapped[str | None] = mapped_column(String(8))
    cluster: Mapped[str | None] = mapped_column(String(80))
    fail_index: Mapped[int | None]
    hidden_fail_reason: Mapped[str | None] = mapped_column(Text)


# A judge attempt's row is written before its calls, as the hold on the arena allowance
# (cost_micros: the most the run may cost), so a concurrent check counts it. Until it is
# graded its summary is {"state": ...}, and no learner sees it; a failed run's row stays
# "failed" with what its calls cost, which the allowance still counts.
HELD, SETTLED, FAILED = "held", "settled", "failed"


class Attempt(Base):
    """One run of a user's eval on one set of a challenge, kept for history and diffs."""

    __tablename__ = "arena_attempts"
    __table_args__ = (Index("ix_arena_attempts_lookup", "user_id", "challenge_id", "tab",
                            "split", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    challenge_id: Mapped[str] = mapped_column(
        ForeignKey("arena_challenges.id", ondelete="CASCADE"))
    tab: Mapped[str] = mapped_column(String(8))  # rules | judge
    split: Mapped[str] = mapped_column(String(8))  # dev | test
    text: Mapped[str] = mapped_column(Text)
    project_id: Mapped[int | None] = mapped_column(
        ForeignKey("projects.id", ondelete="SET NULL"))  # who paid the judge calls
    judge_model: Mapped[str | None] = mapped_column(String(200))
    # {pass_rate, critical_count, ready, passed, total, missed_failures, false_alarms}
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)
    # per trace: {trace_id, label, verdict, agreed, miss, severity, cluster, evidence, ...};
    # for the test set these stay on the server: clients get `report`
    results: Mapped[list[Any]] = mapped_column(JSON)
    report: Mapped[list[Any] | None] = mapped_column(JSON)  # redacted, test set only
    diff: Mapped[dict[str, Any]] = mapped_column(JSON)
    critique: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # meta-judge, judge tab
    cost_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    duration_ms: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Draft(Versioned, Base):
    """The last text a user edited per challenge and tab, and whether the hint is shown."""

    __tablename__ = "arena_drafts"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    challenge_id: Mapped[str] = mapped_column(
        ForeignKey("arena_challenges.id", ondelete="CASCADE"), primary_key=True)
    tab: Mapped[str] = mapped_column(String(8), primary_key=True)
    text: Mapped[str | None] = mapped_column(Text)
    hint_revealed_at: Mapped[datetime | None]
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


def shown() -> ColumnElement[bool]:
    """Attempts a learner sees: graded ones (no judge run in flight or failed)."""
    return Attempt.summary["state"].as_string().is_(None)
