"""A run's results: its outputs (filtered, paginated), one output in full, a summary per target.

Percentiles are nearest-rank (the smallest value with at least p% of the values at or below
it), computed the same way on SQLite and PostgreSQL: a window function numbers each target's
values in order and the wanted ranks are picked with integer arithmetic, so both databases
return the same recorded value (never an interpolation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from assay.core.errors import Invalid
from assay.core.pagination import Page, count_rows
from assay.core.runs import cache
from assay.core.runs.models import CellStatus, Output, Run, RunTarget
from assay.core.runs.progress import ENDED_CELLS, errors_by_target
from assay.core.runs.scoring_outcomes import scoring_outcomes
from assay.core.stats import rates

PERCENTILES = (50, 95)


def rank(n: int, p: int) -> int:
    """The 1-based nearest rank of percentile `p` (1..100) among `n` values (n >= 1)."""
    return max(1, -(-n * p // 100))


def nearest_rank(values: Sequence[float], p: int) -> float | None:
    """The nearest-rank percentile of `values`; None when there are none."""
    if not values:
        return None
    return sorted(values)[rank(len(values), p) - 1]


def targets_of(session: Session, run: Run) -> list[RunTarget]:
    return list(session.scalars(select(RunTarget).where(RunTarget.run_id == run.id)
                                .order_by(RunTarget.position, RunTarget.id)))


def _counted(run: Run, target: RunTarget | None, status: str | None,
             error_class: str | None) -> int | None:
    """The filtered total from the counters planning and the engine keep with the rows (the
    run's, or the target's), when they say it: no filter, or one ended status alone."""
    kept = target if target is not None else run
    if error_class is not None:
        return None
    if status is None:
        return kept.total
    if status in (CellStatus.succeeded, CellStatus.failed, CellStatus.skipped):
        return int(getattr(kept, status))
    return None  # pending and running are one counter's remainder: counted


def _ids_in_position_order(session: Session, run: Run) -> bool:
    ids = list(session.scalars(select(RunTarget.id).where(RunTarget.run_id == run.id)
                               .order_by(RunTarget.position, RunTarget.id)))
    return ids == sorted(ids)


def list_outputs(session: Session, run: Run, page: int, page_size: int,
                 target_id: int | None = None, status: str | None = None,
                 error_class: str | None = None) -> Page[Any]:
    """Rows of (output, target) ordered by case, target, repeat, turn. A target of another
    run is a 422 (not an empty page: the filter is wrong, not the results).

    Planning inserts a run's targets in position order, so target ids follow positions and
    the order is the (run, case, target, repeat, turn) unique index's own: the page's keys
    are found in the index alone (an index-only scan, however deep the page) and only its
    rows are read in full. Targets reordered since (ids no longer in position order) are
    sorted by position the slow way. The total comes from the counters kept with
    the rows where they say it, else a capped count (pagination.count_rows)."""
    conditions: list[ColumnElement[bool]] = [Output.run_id == run.id]
    target = None
    if target_id is not None:
        target = session.scalar(select(RunTarget).where(RunTarget.id == target_id,
                                                        RunTarget.run_id == run.id))
        if target is None:
            raise Invalid("No such target in this run", {"query": {"target_id": [
                "Not a target of this run"]}})
        conditions.append(Output.target_id == target_id)
    if status is not None:
        conditions.append(Output.status == status)
    if error_class is not None:  # only ended cells carry one: the status index finds them
        conditions += [Output.error_class == error_class, Output.status.in_(ENDED_CELLS)]
    key = (Output.case_id, Output.target_id, Output.repeat, Output.turn)
    keys = select(*key).where(*conditions)
    total = _counted(run, target, status, error_class)
    total, exact = (total, True) if total is not None else count_rows(session, keys)
    both = select(Output, RunTarget).join(RunTarget, RunTarget.id == Output.target_id)
    skip = (page - 1) * page_size
    if _ids_in_position_order(session, run):
        wanted = keys.order_by(*key).limit(page_size).offset(skip).subquery()
        stmt = (both.join(wanted, and_(
            Output.run_id == run.id, Output.case_id == wanted.c.case_id,
            Output.target_id == wanted.c.target_id, Output.repeat == wanted.c.repeat,
            Output.turn == wanted.c.turn)).order_by(*key))
    else:
        stmt = (both.where(*conditions).order_by(Output.case_id, RunTarget.position, *key[1:])
                .limit(page_size).offset(skip))
    rows = session.execute(stmt)
    return Page(items=[tuple(row) for row in rows], total=total, page=page,
                page_size=page_size, exact=exact)


@dataclass
class _Totals:
    counts: dict[str, int]
    spent_micros: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached: int = 0


def _totals(session: Session, run_id: int) -> dict[int, _Totals]:
    """target id -> cells by status, cost, tokens and cached cells, from the outputs."""
    rows = session.execute(
        select(Output.target_id, Output.status, func.count(),
               func.coalesce(func.sum(Output.cost_micros), 0),
               func.coalesce(func.sum(Output.tokens_in), 0),
               func.coalesce(func.sum(Output.tokens_out), 0),
               func.coalesce(func.sum(case((Output.cached.is_(True), 1), else_=0)), 0))
        .where(Output.run_id == run_id).group_by(Output.target_id, Output.status))
    out: dict[int, _Totals] = {}
    for target_id, status, count, spent, tokens_in, tokens_out, cached in rows:
        totals = out.setdefault(target_id, _Totals(counts={}))
        totals.counts[status] = totals.counts.get(status, 0) + int(count)
        totals.spent_micros += int(spent)
        totals.tokens_in += int(tokens_in)
        totals.tokens_out += int(tokens_out)
        totals.cached += int(cached)
    return out


def _measured(run_id: int) -> list[ColumnElement[bool]]:
    """The cells whose timings count: succeeded, and not served by the cache (no call)."""
    return [Output.run_id == run_id, Output.status == CellStatus.succeeded,
            Output.cached.is_(False)]


def percentiles(session: Session, run_id: int, column: InstrumentedAttribute[Any],
                ps: Sequence[int] = PERCENTILES) -> dict[int, dict[int, int]]:
    """target id -> {p: nearest-rank value} of `column` over the run's succeeded, uncached
    cells that recorded it, in one query for all targets. Row r of n is percentile p's when
    it is the smallest with r * 100 >= n * p (integers only, so exact)."""
    if session.get_bind().dialect.name == "postgresql":
        return percentiles_postgresql(session, run_id, column, ps)
    return percentiles_window(session, run_id, column, ps)


def percentiles_window(session: Session, run_id: int, column: InstrumentedAttribute[Any],
                       ps: Sequence[int] = PERCENTILES) -> dict[int, dict[int, int]]:
    """Portable (SQLite, PostgreSQL): window functions number each target's values."""
    ranked = (select(Output.target_id.label("target_id"), column.label("value"),
                     func.row_number().over(partition_by=Output.target_id,
                                            order_by=column).label("r"),
                     func.count().over(partition_by=Output.target_id).label("n"))
              .where(*_measured(run_id), column.is_not(None))
              .subquery())
    wanted = or_(*(and_(ranked.c.r * 100 >= ranked.c.n * p,
                        (ranked.c.r - 1) * 100 < ranked.c.n * p) for p in ps))
    rows = session.execute(select(ranked.c.target_id, ranked.c.r, ranked.c.n, ranked.c.value)
                           .where(wanted))
    out: dict[int, dict[int, int]] = {}
    for target_id, r, n, value in rows:
        for p in ps:
            if rank(int(n), p) == int(r):
                out.setdefault(target_id, {})[p] = int(value)
    return out


def percentiles_postgresql(session: Session, run_id: int, column: InstrumentedAttribute[Any],
                           ps: Sequence[int] = PERCENTILES) -> dict[int, dict[int, int]]:
    """The same values through percentile_disc (nearest rank by definition: the first value
    whose cumulative share reaches p; NULLs ignored), which sorts each target's values in
    memory where the window query sorts the whole run, on disk at 100,000 cells (about 5x
    slower). Its float rank ceil(p/100 * n) equals the integer one: for p in 1..100, a
    fractional p/100 * n is at least 0.01 from an integer, and the float product's error
    (about n * 1e-17) cannot cross one; tests check both methods agree."""
    rows = session.execute(
        select(Output.target_id,
               *(func.percentile_disc(p / 100).within_group(column) for p in ps))
        .where(*_measured(run_id)).group_by(Output.target_id))
    out: dict[int, dict[int, int]] = {}
    for target_id, *values in rows:
        found = {p: int(v) for p, v in zip(ps, values, strict=True) if v is not None}
        if found:
            out[target_id] = found
    return out


def summary(session: Session, run: Run) -> dict[str, Any]:
    """Per target: cells by status, success rate (stats/rates.py: succeeded / calls
    sent; skipped cells were never sent and are counted apart), cost, tokens, cached
    cells, latency and time-to-first-token p50/p95, errors by class; per scorer, its
    scores passed, failed and errored. Everything is read from the outputs and scores
    themselves, and kept for a stopped run (cache.py: a million outputs take a second to
    read)."""
    found: dict[str, Any] = cache.kept_json(session, run, "summary:sent",
                                            lambda: _summary(session, run))
    return found


def _summary(session: Session, run: Run) -> dict[str, Any]:
    totals = _totals(session, run.id)
    latency = percentiles(session, run.id, Output.latency_ms)
    ttft = percentiles(session, run.id, Output.ttft_ms)
    errors = errors_by_target(session, run.id)
    targets, all_ok, all_failed = [], 0, 0
    for target in targets_of(session, run):
        found = totals.get(target.id, _Totals(counts={}))
        counts = found.counts
        succeeded = counts.get(CellStatus.succeeded, 0)
        failed = counts.get(CellStatus.failed, 0)
        skipped = counts.get(CellStatus.skipped, 0)
        pending = counts.get(CellStatus.pending, 0) + counts.get(CellStatus.running, 0)
        all_ok, all_failed = all_ok + succeeded, all_failed + failed
        lat, first = latency.get(target.id, {}), ttft.get(target.id, {})
        targets.append({
            "target_id": target.id, "label": target.label, "model_id": target.model_id,
            "total": sum(counts.values()), "succeeded": succeeded, "failed": failed,
            "skipped": skipped, "pending": pending, "success_rate":
            rates.success_rate(succeeded, failed),
            "spent_micros": found.spent_micros, "tokens_in": found.tokens_in,
            "tokens_out": found.tokens_out, "cached": found.cached,
            "latency_p50_ms": lat.get(50), "latency_p95_ms": lat.get(95),
            "ttft_p50_ms": first.get(50), "ttft_p95_ms": first.get(95),
            "errors": errors.get(target.id, {})})
    return {"run_id": run.id, "success_rate": rates.success_rate(all_ok, all_failed),
            "targets": targets, "scoring": scoring_outcomes(session, run.id)}
