"""The one pagination helper: a page of rows plus the total, for any select."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.orm import Session

T = TypeVar("T")

# Past this many rows a total is the planner's estimate (PostgreSQL): counting a million
# index entries costs more than the page itself, and "about 480,000" reads as well.
COUNT_CAP = 10_000


@dataclass
class Page(Generic[T]):
    items: list[T]
    total: int
    page: int
    page_size: int
    exact: bool = True  # False: `total` is an estimate (count_rows)


def count_rows(session: Session, stmt: Select[*tuple[Any, ...]],
               cap: int | None = None) -> tuple[int, bool]:
    """(rows `stmt` returns, exact?). Counted exactly up to `cap`; beyond it PostgreSQL's
    planner estimate (from the table's statistics, never below cap + 1) stands in, marked
    inexact. SQLite has no such estimate: it always counts."""
    cap = COUNT_CAP if cap is None else cap
    stmt = stmt.order_by(None)
    dialect = session.get_bind().dialect.name
    if dialect != "postgresql":
        return int(session.scalar(select(func.count()).select_from(stmt.subquery())) or 0), True
    counted = int(session.scalar(
        select(func.count()).select_from(stmt.limit(cap + 1).subquery())) or 0)
    if counted <= cap:
        return counted, True
    compiled = stmt.compile(dialect=session.get_bind().dialect)
    found: Any = session.connection().exec_driver_sql(
        f"EXPLAIN (FORMAT JSON) {compiled}", compiled.params).scalar()
    plan = json.loads(found) if isinstance(found, str) else found
    return max(cap + 1, int(plan[0]["Plan"]["Plan Rows"])), False


@dataclass(frozen=True)
class Listing:
    """A list's statement with its page window and its count, built once, with bind
    parameters for what varies from one request to the next (the project, the user; the
    page's are named here). Building a statement and its cache key anew cost a list's read
    more than running it (issue 19: the project's lists under 50 clients)."""

    window: Select[*tuple[Any, ...]]
    count: Select[Any]

    @classmethod
    def of(cls, stmt: Select[*tuple[Any, ...]]) -> Listing:
        return cls(stmt.limit(bindparam("page_limit")).offset(bindparam("page_offset")),
                   _count(stmt))


def _count(stmt: Select[*tuple[Any, ...]]) -> Select[Any]:
    return select(func.count()).select_from(stmt.order_by(None).subquery())


def paginate(session: Session, stmt: Select[*tuple[Any, ...]] | Listing, page: int,
             page_size: int, scalars: bool = True, total: int | None = None,
             params: Mapping[str, Any] | None = None) -> Page[Any]:
    """`total`, when the caller knows it (a counter kept with the rows), saves the count;
    so does a last page that is not empty (every row before it is on full pages), which is
    most lists: one page of a project's datasets, models or runs. `params`: the values of
    the statement's bind parameters."""
    offset = (page - 1) * page_size
    if isinstance(stmt, Listing):
        result = session.execute(stmt.window, {**(params or {}), "page_limit": page_size,
                                               "page_offset": offset})
    else:
        result = session.execute(stmt.limit(page_size).offset(offset), params)
    items = list(result.scalars()) if scalars else [tuple(row) for row in result]
    if total is None and 0 < len(items) < page_size:
        total = offset + len(items)
    if total is None:
        count = stmt.count if isinstance(stmt, Listing) else _count(stmt)
        total = session.scalar(count, params) or 0
    return Page(items=items, total=total, page=page, page_size=page_size)
