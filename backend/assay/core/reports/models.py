"""Rollups the project reports read instead of a million outputs (DESIGN §9: the leaderboard
and cost report over 1,000,000 outputs in under 300 ms).

They hold sums, kept exact by every writer in the transaction that changes what they sum
(rollups.py says which): a report over them is the report over the outputs and scores.

- `target_days`: per run target and UTC day its outputs finished: finished outputs
  (succeeded + failed), successes, the model calls' cost and tokens (what their judges
  cost is on the ledger, `spend_days`, by judge model). Costs by day, run and model, and
  the leaderboard's counts, for any whole-day range.
- `target_latencies`: per run target and day, how many succeeded uncached outputs took
  each whole millisecond: exact nearest-rank percentiles for any whole-day range.
- `score_cases`: per scorer, version, model and case, the sum and count of the values its
  scores got and of their verdicts, over every run: the leaderboard's per-case means
  (the bootstrap resamples cases) without reading the scores. `version_key` is the
  version's id, or 0 for every version of the scorer pooled (the leaderboard's default),
  so either reading is one index range already in (model, case) order. `model_key` is
  the target's model id, 0 for targets without a model (recorded traces).

`spend_days` is not a rollup but the ledger itself (core/ledger/) of every provider call
other than a run's own cells: judges, pairwise, judge mode, generation, AI assist,
refinement, scorer trials, arena judging, connection tests. Per project, UTC day, purpose
(`kind`), the model that made the call (`model_key`, 0: none known) and the run it served
(`run_key`, 0: none). Many of its sources expire (Redis) or leave no row, so it is never
recounted: it is what they cost. A run's own cells are on `target_days` (written with
their outputs)."""

from __future__ import annotations

from datetime import date

from sqlalchemy import BigInteger, Date, Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base


class TargetDay(Base):
    __tablename__ = "target_days"

    target_id: Mapped[int] = mapped_column(
        ForeignKey("run_targets.id", ondelete="CASCADE"), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    outputs: Mapped[int] = mapped_column(Integer, default=0)
    succeeded: Mapped[int] = mapped_column(Integer, default=0)
    spent_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_in: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_out: Mapped[int] = mapped_column(BigInteger, default=0)


class TargetLatency(Base):
    __tablename__ = "target_latencies"

    target_id: Mapped[int] = mapped_column(
        ForeignKey("run_targets.id", ondelete="CASCADE"), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    latency_ms: Mapped[int] = mapped_column(Integer, primary_key=True)
    n: Mapped[int] = mapped_column(Integer, default=0)


class ScoreCase(Base):
    __tablename__ = "score_cases"

    scorer_id: Mapped[int] = mapped_column(
        ForeignKey("scorer_configs.id", ondelete="CASCADE"), primary_key=True)
    version_key: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_key: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[int] = mapped_column(
        ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True)
    total: Mapped[float] = mapped_column(Float, default=0.0)
    n: Mapped[int] = mapped_column(Integer, default=0)
    passed: Mapped[int] = mapped_column(Integer, default=0)
    judged: Mapped[int] = mapped_column(Integer, default=0)


class SpendDay(Base):
    __tablename__ = "spend_days"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    kind: Mapped[str] = mapped_column(String(20), primary_key=True)
    model_key: Mapped[int] = mapped_column(Integer, primary_key=True)  # 0: no model
    # 0: no run (no foreign key: what a deleted run's judges cost stays the project's)
    run_key: Mapped[int] = mapped_column(Integer, primary_key=True, default=0)
    calls: Mapped[int] = mapped_column(Integer, default=0)
    spent_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_in: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_out: Mapped[int] = mapped_column(BigInteger, default=0)
