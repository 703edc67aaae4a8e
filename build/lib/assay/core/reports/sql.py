"""SQL building blocks the reports share: one score per output, UTC days, and exact
nearest-rank percentiles from a histogram.

One score per output: an output can hold several scores of one scorer (one per judge
model, one per human, and, when versions are pooled, one per version). Its value is their
mean; it passed when every verdict it got was a pass (a panel must agree); scores that
failed to score (value NULL) count for neither.

Percentiles: the database counts each distinct value per group (a hash aggregate; latency
is whole milliseconds, so there are few distinct values) and the nearest rank is picked
from the cumulative counts here. The result is exactly the recorded value nearest-rank
gives (the smallest value with at least p% of the values at or below it), the same on
SQLite and PostgreSQL, and cheaper than sorting every value (percentile_disc) per group."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Subquery, case, func, select, text
from sqlalchemy.orm import InstrumentedAttribute, Session

from assay.core.runs.results import rank
from assay.core.scoring.models import Score

PERCENTILES = (50, 95)
REPORT_WORK_MEM = "64MB"
Column = ColumnElement[Any] | InstrumentedAttribute[Any]


def output_scores(version_ids: Sequence[int], run_ids: Sequence[int] | None = None
                  ) -> Subquery:
    """(output_id, value, passed 1/0/NULL) for the outputs the versions scored (of the
    runs `run_ids` only, when given: the scores' run index finds them)."""
    verdict = case((Score.passed.is_(True), 1), (Score.passed.is_(False), 0))
    stmt = (select(Score.output_id.label("output_id"), func.avg(Score.value).label("value"),
                   func.min(verdict).label("passed"))
            .where(Score.scorer_version_id.in_(list(version_ids))))
    if run_ids is not None:
        stmt = stmt.where(Score.run_id.in_(list(run_ids)))
    return stmt.group_by(Score.output_id).subquery("output_scores")


def for_aggregates(session: Session) -> None:
    """PostgreSQL settings for this transaction's report queries: memory enough to hash a
    million outputs without spilling to disk (the default 4 MB makes the per-output score
    aggregate write and reread temp files), and no JIT compilation, which costs more than
    it saves on queries this short (it compiled for half a second and ran for less)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text(f"SET LOCAL work_mem = '{REPORT_WORK_MEM}'"))
        session.execute(text("SET LOCAL jit = off"))


def day_of(session: Session, column: Any) -> ColumnElement[Any]:
    """The UTC calendar day of a timestamp column, as the database spells it."""
    if session.get_bind().dialect.name == "postgresql":
        return func.date(func.timezone("UTC", column))  # a cast: cheaper than to_char
    return func.substr(column, 1, 10)  # SQLite stores UTC as "YYYY-MM-DD HH:MM:SS.ffffff"


def day_text(value: Any) -> str:
    return str(value)[:10]


def nearest_rank_of_counts(counts: Iterable[tuple[int, int]],
                           ps: Sequence[int] = PERCENTILES) -> dict[int, int]:
    """{p: value} from (value, how many) pairs; {} when there are none."""
    ordered = sorted(counts)
    n = sum(count for _, count in ordered)
    if n == 0:
        return {}
    out: dict[int, int] = {}
    wanted = sorted((rank(n, p), p) for p in ps)
    seen, i = 0, 0
    for value, count in ordered:
        seen += count
        while i < len(wanted) and wanted[i][0] <= seen:
            out[wanted[i][1]] = int(value)
            i += 1
    return out


def value_counts(session: Session, key: Column, value: Column,
                 conditions: Sequence[ColumnElement[bool]]) -> dict[Any, list[tuple[int, int]]]:
    """key -> [(value, how many)] over the rows matching `conditions` (NULLs left out)."""
    rows = session.execute(select(key, value, func.count())
                           .where(*conditions, value.is_not(None)).group_by(key, value))
    grouped: dict[Any, list[tuple[int, int]]] = {}
    for group, found, count in rows:
        grouped.setdefault(group, []).append((int(found), int(count)))
    return grouped


def percentiles_by(session: Session, key: Column, value: Column,
                   conditions: Sequence[ColumnElement[bool]],
                   ps: Sequence[int] = PERCENTILES) -> dict[Any, dict[int, int]]:
    """key -> {p: nearest-rank value} of `value` over the rows matching `conditions`
    (NULL values left out), from one GROUP BY (key, value)."""
    return {group: nearest_rank_of_counts(counts, ps)
            for group, counts in value_counts(session, key, value, conditions).items()}


def as_int(value: Any) -> int:
    return int(value or 0)


def ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None
