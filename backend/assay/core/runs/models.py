"""Runs, their targets, and one output row per planned cell (case x target x repeat)."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base, utcnow


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


class CellStatus(enum.StrEnum):
    pending = "pending"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"


class Run(Base):
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
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]


class RunTarget(Base):
    """What a run sends each case to: a model (later also params and a prompt version)."""

    __tablename__ = "run_targets"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("model_configs.id"))
    position: Mapped[int] = mapped_column(default=0)


class Output(Base):
    """One cell. Every write is keyed on (run, case, target, repeat): recorded exactly once."""

    __tablename__ = "outputs"
    __table_args__ = (
        UniqueConstraint("run_id", "case_id", "target_id", "repeat", name="uq_outputs_cell"),
        Index("ix_outputs_claim", "run_id", "status", "lease_until"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    target_id: Mapped[int] = mapped_column(ForeignKey("run_targets.id", ondelete="CASCADE"))
    repeat: Mapped[int] = mapped_column(default=0)
    status: Mapped[str] = mapped_column(String(16), default=CellStatus.pending)
    text: Mapped[str | None] = mapped_column(Text)
    error_class: Mapped[str | None] = mapped_column(String(32))
    error_message: Mapped[str | None] = mapped_column(Text)
    tokens_in: Mapped[int | None]
    tokens_out: Mapped[int | None]
    cost_micros: Mapped[int | None]
    latency_ms: Mapped[int | None]
    ttft_ms: Mapped[int | None]  # time to first token, when the call streamed
    cached: Mapped[bool] = mapped_column(default=False)  # served by the response cache: free
    raw_request: Mapped[dict[str, Any] | None]  # as sent (no secrets: headers are not kept)
    raw_response: Mapped[dict[str, Any] | None]
    attempts: Mapped[int] = mapped_column(default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
