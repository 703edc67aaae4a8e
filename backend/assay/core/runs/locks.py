"""Row locks of the run engine, in one order.

Every transaction that moves a run's cells and counters locks run -> outputs -> targets ->
project, in that order: status changes (pause, cancel, stop for budget) lock the run row
before they touch its cells, so a writer that took outputs or targets first and then the
run would deadlock against them. SQLite serialises writers on its own: no row locks there.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.runs.models import Run


def for_update(session: Session, stmt: Any) -> Any:
    """`stmt` FOR UPDATE on PostgreSQL."""
    if session.get_bind().dialect.name == "postgresql":
        return stmt.with_for_update()
    return stmt


def lock_run(session: Session, run_id: int) -> None:
    """Take the run row's lock before any of its cells' (a no-op when already held)."""
    session.execute(for_update(session, select(Run.id).where(Run.id == run_id)))
