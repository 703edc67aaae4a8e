"""Row locks of the run engine, in one order.

Every transaction that moves a run's cells and counters locks run -> outputs -> targets ->
project, in that order: status changes (pause, cancel, stop for budget) lock the run row
before they touch its cells, so a writer that took outputs or targets first and then the
run would deadlock against them. SQLite serialises writers on its own: no row locks there.

One writer goes the other way, on purpose: a shard writing its finished batch locks its
own leased cells first and the run row only to move the counters, so the run (which every
claim locks whole) is held for a few statements, not the whole batch. Nothing that holds
the run waits on such a cell: status changes touch pending, failed or skipped cells, and
whoever takes running cells over (a claim, the reaper) skips the locked ones.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from assay.core.projects.models import Project
from assay.core.runs.models import Run


def for_update(session: Session, stmt: Any, skip_locked: bool = False) -> Any:
    """`stmt` FOR UPDATE on PostgreSQL (`skip_locked`: leaving out rows locked already)."""
    if session.get_bind().dialect.name == "postgresql":
        return stmt.with_for_update(skip_locked=skip_locked)
    return stmt


def lock_run(session: Session, run_id: int) -> None:
    """Take the run row's lock before any of its cells' (a no-op when already held)."""
    session.execute(for_update(session, select(Run.id).where(Run.id == run_id)))


def lock_project(session: Session, project_id: int) -> None:
    """Take the project row's lock before reading what a check of its budget needs.

    On SQLite there is no FOR UPDATE, and the driver opens the write transaction only at
    the first write: reads before it see a snapshot another writer may change before ours
    commits, so a check made there can pass twice. A no-op update opens the transaction
    first; from then on reads are current and no other writer commits until we do."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(Project.id).where(Project.id == project_id).with_for_update())
    else:
        session.execute(update(Project).where(Project.id == project_id).values(
            reserved_micros=Project.reserved_micros).execution_options(
            synchronize_session=False))
