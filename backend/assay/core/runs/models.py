"""Runs, their targets, and one output row per planned cell (case x target x repeat)."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base, utcnow
from assay.core.row_versions import Versioned


class RunStatus(enum.StrEnum):
    pending = "pending"
    running = "running"
    paused = "paused"
    completed = "completed"
    partial = "partial"
    failed = "failed"
    cancelled = "cancelled"
    budget_exceeded = "budget_exceeded"


TERMINAL = frozenset(
    {RunStatus.completed, RunStatus.partial, RunStatus.failed, RunStatus.cancelled,
     RunStatus.budget_exceeded}
)
# ended by a user or a cap, not by the last cell: no shard closes them (finish_if_done)
STOPPED = frozenset({RunStatus.cancelled, RunStatus.budget_exceeded})


class CellStatus(enum.StrEnum):
    pending = "pending"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    skipped = "skipped"  # never sent: the run was cancelled or ran out of budget


OPEN_CELLS = (CellStatus.pending, CellStatus.running)


class Run(Versioned, Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    dataset_version_id: Mapped[int] = mapped_column(ForeignKey("dataset_versions.id"))
    status: Mapped[str] = mapped_column(String(20), default=RunStatus.pending)
    total: Mapped[int] = mapped_column(default=0)
    succeeded: Mapped[int] = mapped_column(default=0)
    failed: Mapped[int] = mapped_column(default=0)
    skipped: Mapped[int] = mapped_column(default=0)
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # Budget, in micro-dollars. Counters move only in the transactions that claim (reserve)
    # and record (settle, release) cells, so spent + reserved never exceeds the cap.
    budget_micros: Mapped[int | None] = mapped_column(BigInteger)
    alert_threshold: Mapped[float] = mapped_column(default=0.8)
    alerted_at: Mapped[datetime | None]
    reserved_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    spent_micros: Mapped[int] = mapped_column(BigInteger, default=0)  # models and judges
    judge_spent_micros: Mapped[int] = mapped_column(BigInteger, default=0)  # judges' share
    # held by the scoring job for the judges of the page it scores; the reaper releases it
    # once the lease has expired (the job died)
    scoring_reserved_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    scoring_lease_until: Mapped[datetime | None]
    tokens_in: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_out: Mapped[int] = mapped_column(BigInteger, default=0)
    # bumped by each writer of the run's scores outside the engine's batches (cache.py)
    scores_version: Mapped[int] = mapped_column(default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)  # why the run stopped, when it did
    # the scorer a user pinned as the run's headline (headline.py); None: the default
    headline_scorer_id: Mapped[int | None] = mapped_column(
        ForeignKey("scorer_configs.id", ondelete="SET NULL"))
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]


class RunTarget(Base):
    """What a run sends each case to: a model with parameter overrides and, for template
    cases, a prompt version. A trace dataset's run has one target without a model: the
    recorded trace is the output. Counters move with the run's (see Run)."""

    __tablename__ = "run_targets"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    model_id: Mapped[int | None] = mapped_column(ForeignKey("model_configs.id"))
    prompt_version_id: Mapped[int | None] = mapped_column(ForeignKey("prompt_versions.id"))
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)  # overrides of the model's
    label: Mapped[str] = mapped_column(String(300), default="")
    position: Mapped[int] = mapped_column(default=0)
    total: Mapped[int] = mapped_column(default=0)
    succeeded: Mapped[int] = mapped_column(default=0)
    failed: Mapped[int] = mapped_column(default=0)
    skipped: Mapped[int] = mapped_column(default=0)
    spent_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_in: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_out: Mapped[int] = mapped_column(BigInteger, default=0)


class Output(Base):
    """One cell. Every write is keyed on (run, case, target, repeat, turn): recorded exactly
    once. `turn` is the user turn of a conversation case (0 otherwise)."""

    __tablename__ = "outputs"
    __table_args__ = (
        UniqueConstraint("run_id", "case_id", "target_id", "repeat", "turn",
                         name="uq_outputs_cell"),
        Index("ix_outputs_claim", "run_id", "status", "lease_until"),
        Index("ix_outputs_target", "target_id", "status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    target_id: Mapped[int] = mapped_column(ForeignKey("run_targets.id", ondelete="CASCADE"))
    repeat: Mapped[int] = mapped_column(default=0)
    turn: Mapped[int] = mapped_column(default=0)
    status: Mapped[str] = mapped_column(String(16), default=CellStatus.pending)
    text: Mapped[str | None] = mapped_column(Text)
    error_class: Mapped[str | None] = mapped_column(String(32))
    error_message: Mapped[str | None] = mapped_column(Text)
    tokens_in: Mapped[int | None]
    tokens_out: Mapped[int | None]
    cost_micros: Mapped[int | None]  # the model call's
    judge_cost_micros: Mapped[int | None] = mapped_column(BigInteger)  # its scorers' judges
    latency_ms: Mapped[int | None]
    ttft_ms: Mapped[int | None]  # time to first token, when the call streamed
    cached: Mapped[bool] = mapped_column(default=False)  # served by the response cache: free
    raw_request: Mapped[dict[str, Any] | None]  # as sent (no secrets: headers are not kept)
    raw_response: Mapped[dict[str, Any] | None]
    # a RAG run's cell: the chunks retrieved for it and put in its prompt
    # [{chunk_id, document_id, position, text, score}], best first (core/retrieval)
    retrieved: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    attempts: Mapped[int] = mapped_column(default=0)
    reserved_micros: Mapped[int] = mapped_column(BigInteger, default=0)  # held while in flight
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
