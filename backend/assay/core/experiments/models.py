"""Experiments (edison): a wizard's configuration, frozen when started, then iterations of
run -> judge -> aggregate -> refine -> human review, each approval a new prompt version."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base, utcnow
from assay.core.row_versions import Versioned


class ExperimentStatus(enum.StrEnum):
    draft = "draft"
    running = "running"
    paused = "paused"
    completed = "completed"
    failed = "failed"
    cancelled = "cancelled"


EXPERIMENT_ENDED = frozenset(
    {ExperimentStatus.completed, ExperimentStatus.failed, ExperimentStatus.cancelled})


class StopReason(enum.StrEnum):
    max_iterations = "max_iterations"
    budget = "budget"
    max_tokens = "max_tokens"
    converged = "converged"
    no_suggestion = "no_suggestion"
    cancelled = "cancelled"
    failed = "failed"
    user = "user"  # a person ended it after a review
    rejected = "rejected"  # too many suggestions in a row were rejected


class IterationStatus(enum.StrEnum):
    executing = "executing"
    judging = "judging"
    aggregating = "aggregating"
    refining = "refining"
    awaiting_review = "awaiting_review"
    approved = "approved"
    rejected = "rejected"
    completed = "completed"
    failed = "failed"
    cancelled = "cancelled"


class SuggestionStatus(enum.StrEnum):
    pending = "pending"
    approved = "approved"
    rejected = "rejected"
    none = "none"  # the refiner gave no valid diff within its attempts


class Experiment(Versioned, Base):
    __tablename__ = "experiments"
    __table_args__ = (Index("ix_experiments_project_updated", "project_id", "updated_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default=ExperimentStatus.draft)
    stop_reason: Mapped[str | None] = mapped_column(String(40))  # a StopReason
    stop_detail: Mapped[str | None] = mapped_column(Text)  # the sentence shown with it
    # The wizard's seven steps, keyed objective, rubric, prompt, data, models, judges, stop.
    # Edited freely (and partially) while a draft; read-only once frozen.
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    config_version: Mapped[int] = mapped_column(default=0)  # latest ExperimentConfigVersion
    frozen_at: Mapped[datetime | None]
    template: Mapped[str | None] = mapped_column(String(60))  # the template it came from
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    # Pinned at start; counterexamples added in review move it to a newer version.
    dataset_version_id: Mapped[int | None] = mapped_column(ForeignKey("dataset_versions.id"))
    # Case ids: the refiner only ever sees refinement cases; held-out ones prove the gain.
    refinement_case_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    holdout_case_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    holdout_fraction: Mapped[float] = mapped_column(default=0.3)
    split_seed: Mapped[int | None]
    prompt_id: Mapped[int | None] = mapped_column(ForeignKey("prompts.id", ondelete="SET NULL"))
    seed_prompt_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("prompt_versions.id", ondelete="SET NULL"))
    current_prompt_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("prompt_versions.id", ondelete="SET NULL"))
    best_prompt_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("prompt_versions.id", ondelete="SET NULL"))
    # Scorer configs made from the rubric / safety steps at start (the iterations' runs use them).
    scorer_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    # Money in micro-dollars. The cap holds over every phase; refinement and assist calls
    # reserve against it like run cells do (reserved_micros), runs carry their own share.
    budget_micros: Mapped[int | None] = mapped_column(BigInteger)
    alert_threshold: Mapped[float] = mapped_column(default=0.8)
    max_tokens: Mapped[int | None] = mapped_column(BigInteger)
    reserved_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    execution_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    judging_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    refinement_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    assist_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_in: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_out: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]

    @property
    def spent_micros(self) -> int:
        return (self.execution_micros + self.judging_micros + self.refinement_micros
                + self.assist_micros)


class ExperimentConfigVersion(Base):
    """A frozen snapshot of the configuration an experiment ran with (never edited)."""

    __tablename__ = "experiment_config_versions"
    __table_args__ = (UniqueConstraint("experiment_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    experiment_id: Mapped[int] = mapped_column(
        ForeignKey("experiments.id", ondelete="CASCADE"))
    number: Mapped[int]
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Iteration(Base):
    """One pass of the loop: an engine run of a prompt version, scored by the experiment's
    judges (run_id), aggregated, then a refinement suggestion for a person to review."""

    __tablename__ = "iterations"
    __table_args__ = (UniqueConstraint("experiment_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    experiment_id: Mapped[int] = mapped_column(
        ForeignKey("experiments.id", ondelete="CASCADE"))
    number: Mapped[int]  # 1-based
    status: Mapped[str] = mapped_column(String(20), default=IterationStatus.executing)
    paused: Mapped[bool] = mapped_column(default=False)  # the phase in status resumes
    prompt_version_id: Mapped[int] = mapped_column(ForeignKey("prompt_versions.id"))
    dataset_version_id: Mapped[int | None] = mapped_column(ForeignKey("dataset_versions.id"))
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    # Per model: composite with CI, per-criterion means with CIs, on all / refinement /
    # held-out cases; delta vs the previous iteration with the paired verdict.
    aggregate: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    composite: Mapped[float | None]  # headline (all cases, best model) for lists and stop rules
    holdout_composite: Mapped[float | None]
    refinement_composite: Mapped[float | None]
    weakest_criteria: Mapped[list[str]] = mapped_column(JSON, default=list)
    error: Mapped[str | None] = mapped_column(Text)
    execution_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    judging_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    refinement_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_in: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_out: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    phase_started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]


class Suggestion(Base):
    """The refiner's proposal for an iteration: one unified diff and a note, or none."""

    __tablename__ = "suggestions"

    id: Mapped[int] = mapped_column(primary_key=True)
    iteration_id: Mapped[int] = mapped_column(
        ForeignKey("iterations.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16), default=SuggestionStatus.pending)
    diff: Mapped[str | None] = mapped_column(Text)  # as it stands (after a reviewer's edit)
    original_diff: Mapped[str | None] = mapped_column(Text)  # as the refiner wrote it
    note: Mapped[str | None] = mapped_column(Text)
    no_suggestion_reason: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(default=0)
    validation_errors: Mapped[list[str]] = mapped_column(JSON, default=list)
    # each refused attempt: {attempt, kind (call | format | guardrail), rule, message}
    attempt_failures: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # the failing refinement-set exemplars the refiner saw (case, output, scores, rationales)
    exemplars: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    cost_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_in: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_out: Mapped[int] = mapped_column(BigInteger, default=0)
    reviewed_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    reviewed_at: Mapped[datetime | None]
    reject_reason: Mapped[str | None] = mapped_column(Text)
    prompt_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("prompt_versions.id", ondelete="SET NULL"))  # what approval created
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ReviewComment(Base):
    __tablename__ = "review_comments"

    id: Mapped[int] = mapped_column(primary_key=True)
    suggestion_id: Mapped[int] = mapped_column(
        ForeignKey("suggestions.id", ondelete="CASCADE"), index=True)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    kind: Mapped[str] = mapped_column(String(20), default="comment")  # or approve, reject, edit
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
