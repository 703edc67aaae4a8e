"""A budget hold made outside runs (core/experiments/spend.py): one row per hold until it
is settled or released, so that a hold whose owner died is found and given back."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base, utcnow


class BudgetHold(Base):
    """`micros` are in the project's (and the experiment's) `reserved_micros`; the owner
    (a generation job, a scorer trial, a critique, AI assist, an arena judge run, an
    experiment's step) settles or releases it by `lease_until`, the longest it may live
    (its job's timeout, its request's deadline): past that, the reaper gives it back."""

    __tablename__ = "budget_holds"
    __table_args__ = (Index("ix_budget_holds_lease", "lease_until"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    experiment_id: Mapped[int | None] = mapped_column(
        ForeignKey("experiments.id", ondelete="CASCADE"))
    micros: Mapped[int] = mapped_column(BigInteger)
    what: Mapped[str] = mapped_column(String(100))  # what the hold pays for, for logs
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    lease_until: Mapped[datetime]
