"""Scorer configs with immutable versions, the scorers a run applies, and the scores and
pairwise comparisons they produce (DESIGN §2, §5)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base, utcnow
from assay.core.row_versions import Versioned


class ScorerConfig(Versioned, Base):
    __tablename__ = "scorer_configs"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(32))
    description: Mapped[str | None] = mapped_column(Text)
    archived_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ScorerVersion(Base):
    """Never edited once written: every score names the exact version that produced it."""

    __tablename__ = "scorer_versions"
    __table_args__ = (UniqueConstraint("scorer_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    scorer_id: Mapped[int] = mapped_column(ForeignKey("scorer_configs.id", ondelete="CASCADE"))
    number: Mapped[int]
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    note: Mapped[str | None] = mapped_column(String(500))
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class RunScorer(Base):
    """A scorer version a run applies to every output as it lands."""

    __tablename__ = "run_scorers"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"),
                                        primary_key=True)
    scorer_version_id: Mapped[int] = mapped_column(ForeignKey("scorer_versions.id"),
                                                   primary_key=True)
    position: Mapped[int] = mapped_column(default=0)


class Score(Versioned, Base):
    """One score of one output by one scorer version, from one source: "" for
    deterministic kinds, the judge model for judges, "user:<id>" for a human.
    A human's score is edited in place, so it counts its edits (`row_version`, If-Match).

    The output's target and case are copied here (they never change) so the reports
    aggregate scores per model and case from this table and the few run targets, without
    joining a million outputs; the leaderboard index covers that read."""

    __tablename__ = "scores"
    __table_args__ = (
        UniqueConstraint("output_id", "scorer_version_id", "source", name="uq_scores_source"),
        Index("ix_scores_run", "run_id", "scorer_version_id"),
        Index("ix_scores_leaderboard", "scorer_version_id", "target_id", "case_id",
              postgresql_include=["value", "passed"]),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    output_id: Mapped[int] = mapped_column(ForeignKey("outputs.id", ondelete="CASCADE"))
    target_id: Mapped[int] = mapped_column(ForeignKey("run_targets.id", ondelete="CASCADE"))
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    scorer_version_id: Mapped[int] = mapped_column(ForeignKey("scorer_versions.id"))
    kind: Mapped[str] = mapped_column(String(32))
    source: Mapped[str] = mapped_column(String(200), default="")
    value: Mapped[float | None]  # 0..1; None: scoring failed (see error)
    passed: Mapped[bool | None]
    criteria: Mapped[dict[str, float]] = mapped_column(JSON, default=dict)
    rationale: Mapped[str] = mapped_column(Text, default="")
    evidence: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    severity: Mapped[str | None] = mapped_column(String(16))
    flags: Mapped[list[str]] = mapped_column(JSON, default=list)
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    error: Mapped[str | None] = mapped_column(Text)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    comment: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class Comparison(Base):
    """A pairwise judgement of two outputs of one case by one judge, asked in both orders."""

    __tablename__ = "comparisons"
    __table_args__ = (
        UniqueConstraint("output_a_id", "output_b_id", "scorer_version_id", "judge_model",
                         name="uq_comparisons_pair"),
        Index("ix_comparisons_run", "run_id", "scorer_version_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    scorer_version_id: Mapped[int] = mapped_column(ForeignKey("scorer_versions.id"))
    judge_model: Mapped[str] = mapped_column(String(200))
    output_a_id: Mapped[int] = mapped_column(ForeignKey("outputs.id", ondelete="CASCADE"))
    output_b_id: Mapped[int] = mapped_column(ForeignKey("outputs.id", ondelete="CASCADE"))
    winner: Mapped[str | None] = mapped_column(String(4))  # a | b | tie; None: orders disagree
    position_bias: Mapped[bool] = mapped_column(default=False)
    orders: Mapped[list[str | None]] = mapped_column(JSON, default=list)
    rationale: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
