"""The one pagination helper: totals are exact, and a last page that is not empty needs no
count (the statements it ran say so)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Integer, MetaData, Table, create_engine, event, insert, select
from sqlalchemy.orm import Session

from assay.core.pagination import paginate

ROWS = Table("rows", MetaData(), Column("id", Integer, primary_key=True))


def _session(n: int) -> tuple[Session, list[str]]:
    engine = create_engine("sqlite://")
    ROWS.create(engine)
    with engine.begin() as conn:
        if n:
            conn.execute(insert(ROWS), [{"id": i + 1} for i in range(n)])
    seen: list[str] = []

    def record(*args: Any) -> None:
        seen.append(args[2])

    event.listen(engine, "before_cursor_execute", record)
    return Session(engine), seen


def test_totals_are_exact_on_every_page_and_a_partial_last_page_is_not_counted() -> None:
    session, seen = _session(45)
    stmt = select(ROWS.c.id).order_by(ROWS.c.id)
    for page, (size, counted) in {1: (20, True), 2: (20, True), 3: (5, False),
                                  4: (0, True)}.items():
        seen.clear()
        found = paginate(session, stmt, page, 20)
        assert (len(found.items), found.total) == (size, 45)
        assert any("count(" in s for s in seen) is counted, (page, seen)
    session, _ = _session(0)
    assert paginate(session, select(ROWS.c.id), 1, 20).total == 0
