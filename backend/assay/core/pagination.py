"""The one pagination helper: a page of rows plus the total, for any select."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

T = TypeVar("T")


@dataclass
class Page(Generic[T]):
    items: list[T]
    total: int
    page: int
    page_size: int


def paginate(session: Session, stmt: Select[*tuple[Any, ...]], page: int, page_size: int,
             scalars: bool = True, total: int | None = None) -> Page[Any]:
    """`total`, when the caller knows it (a counter kept with the rows), saves the count."""
    if total is None:
        total = session.scalar(
            select(func.count()).select_from(stmt.order_by(None).subquery())) or 0
    window = stmt.limit(page_size).offset((page - 1) * page_size)
    result = session.execute(window)
    items = list(result.scalars()) if scalars else [tuple(row) for row in result]
    return Page(items=items, total=total, page=page, page_size=page_size)
