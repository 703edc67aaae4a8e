"""Optimistic concurrency: an editable row counts its writes in `row_version`, and a write
names the count it was based on. One conditional UPDATE compares and bumps it, so of two
writes based on the same version exactly one succeeds and the other is refused with the
current version: nobody's edit silently replaces a newer one (issue 31 item 5).

Only user edits go through claim(); background jobs that touch the same rows (spend,
progress) leave row_version alone and so never conflict with them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, inspect, text, update
from sqlalchemy.orm import Mapped, Session, mapped_column
from sqlalchemy.orm.attributes import set_committed_value

from assay.core.errors import DomainError


class Versioned:
    """Mixin for a table whose rows users edit: the number of edits so far (1 at insert)."""

    row_version: Mapped[int] = mapped_column(default=1, server_default=text("1"))


class StaleWrite(DomainError):
    """412: the write was based on an older version than the one stored."""

    status, code = 412, "STALE_WRITE"

    def __init__(self, based_on: int, current: int):
        super().__init__(f"This was changed since you read it (you sent version {based_on}, "
                         f"the current one is {current}); nothing was written. Reload, apply "
                         "your change to the current version and send it again.")
        self.based_on, self.current = based_on, current


def version_of(row: Versioned | None) -> int:
    """0 for a row not written yet (e.g. a draft never saved)."""
    if row is None or inspect(row).transient or inspect(row).pending:
        return 0
    return row.row_version


def claim(session: Session, row: Any, based_on: int | None) -> None:
    """Checks that `row` is at version `based_on` and holds it (a row lock on PostgreSQL,
    the write lock on SQLite) so that no other write comes between; the transaction's
    commit then moves it to the next version if it wrote anything (a save of the current
    values is no write). StaleWrite when it is not. `based_on` None (a client that sends
    no version) means "whatever is stored now". Call it before changing the row."""
    state = inspect(row)
    if state.transient or state.pending:  # inserted by this write: only "never written" fits
        if based_on not in (None, 0):
            raise StaleWrite(based_on, 0)
        return
    for _ in range(3):  # without a version, another write in between is simply read first
        expected = row.row_version if based_on is None else based_on
        if _hold(session, row, expected):
            session.info.setdefault(_HELD, []).append((row, expected))
            return
        session.refresh(row)  # what the other write stored: the refusal's body shows it
        if based_on is not None:
            break
    raise StaleWrite(expected, row.row_version)


_HELD = "assay.row_versions.held"
_WROTE = "assay.row_versions.wrote"


def _where(row: Any) -> list[Any]:
    return [column == getattr(row, column.key) for column in inspect(row).mapper.primary_key]


def _hold(session: Session, row: Any, expected: int) -> bool:
    table = type(row)
    same = {c.key: c for c in inspect(table).columns if c.onupdate is not None}  # untouched
    done = session.execute(
        update(table).where(*_where(row), table.row_version == expected)
        .values(row_version=table.row_version, **same)
        .execution_options(synchronize_session=False))
    return bool(done.rowcount == 1)  # type: ignore[attr-defined]  # an UPDATE's CursorResult


def _writes(session: Session) -> bool:
    return bool(session.new or session.deleted
                or any(session.is_modified(row) for row in session.dirty))


@event.listens_for(Session, "before_flush")
def _note_writes(session: Session, context: Any, instances: Any) -> None:
    if session.info.get(_HELD) and _writes(session):
        session.info[_WROTE] = True


@event.listens_for(Session, "before_commit")
def _next_versions(session: Session) -> None:
    held = session.info.pop(_HELD, None)
    if not held or not (session.info.pop(_WROTE, False) or _writes(session)):
        return
    for row, expected in held:
        table = type(row)
        session.execute(update(table).where(*_where(row)).values(row_version=expected + 1)
                        .execution_options(synchronize_session=False))
        set_committed_value(row, "row_version", expected + 1)


@event.listens_for(Session, "after_rollback")
def _forget(session: Session) -> None:
    session.info.pop(_HELD, None)
    session.info.pop(_WROTE, None)
