"""What the run page and the reports compute from a run's outputs and scores, kept per run
(`run_caches`) so that reading it again does not redo it (issue 19: a 20,000-output run's
statistics in under 300 ms, date-range reports over a million outputs too).

An entry is valid while its run's stamp is unchanged. The stamp is made of what moves when
the numbers can: the run's status and cell counters (every batch of results the engine
records moves them, in the transaction that writes the batch's scores) and
`runs.scores_version`, which every writer of a run's scores outside the engine's batches
bumps in its own transaction (`scores_changed`: the scoring job that backfills or rescores
a run, a reviewer's manual score or its removal). Only runs that have stopped are kept:
a running run's numbers move with every batch, so they are computed as they are asked for.

Readers take the stamp before they read the data (the run row is loaded first), so an
entry stored from data older than its stamp cannot happen: at worst an entry is stamped
older than its data and is recomputed once more. Payloads are JSON (or bytes), written
with an upsert, so two readers filling the same entry do not collide. The caller commits.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import ForeignKey, LargeBinary, String, Table, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, Session, mapped_column

from assay.core.base import Base, utcnow
from assay.core.runs.models import TERMINAL, Run


class RunCache(Base):
    __tablename__ = "run_caches"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"),
                                        primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    stamp: Mapped[str] = mapped_column(String(100))
    payload: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


_TABLE = cast(Table, RunCache.__table__)
T = TypeVar("T")


def stamp(run: Run) -> str | None:
    """The run's stamp, or None while it may still move (not stopped)."""
    if run.status not in TERMINAL:
        return None
    return f"{run.status}/{run.succeeded}/{run.failed}/{run.skipped}/{run.scores_version}"


def scores_changed(session: Session, run_id: int) -> None:
    """A writer changed the run's scores outside the engine's batches: what was kept from
    them is stale."""
    session.execute(update(Run).where(Run.id == run_id)
                    .values(scores_version=Run.scores_version + 1))


def get_many(session: Session, stamps: dict[int, str], key: str) -> dict[int, bytes]:
    """run id -> the payload kept under `key`, for the runs whose stamp still matches."""
    if not stamps:
        return {}
    rows = session.execute(select(RunCache.run_id, RunCache.stamp, RunCache.payload).where(
        RunCache.run_id.in_(list(stamps)), RunCache.key == key))
    return {run_id: bytes(payload) for run_id, found, payload in rows
            if found == stamps[run_id]}


def put(session: Session, run_id: int, key: str, run_stamp: str, payload: bytes) -> None:
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert(_TABLE) if dialect == "postgresql" else sqlite.insert(_TABLE)
    stmt = insert.values(run_id=run_id, key=key, stamp=run_stamp, payload=payload,
                         created_at=utcnow())
    session.execute(stmt.on_conflict_do_update(
        index_elements=["run_id", "key"],
        set_={"stamp": stmt.excluded.stamp, "payload": stmt.excluded.payload,
              "created_at": stmt.excluded.created_at}))


def kept_many(session: Session, runs: Sequence[Run], key: str,
              compute: Callable[[list[int]], dict[int, T]], dump: Callable[[T], bytes],
              load: Callable[[bytes], T]) -> dict[int, T]:
    """run id -> its value under `key`: what was kept for it, else `compute(ids)` of those
    missing (kept for the stopped runs), the kept ones first."""
    stamps = {run.id: found for run in runs if (found := stamp(run)) is not None}
    kept = {run_id: load(payload) for run_id, payload in get_many(session, stamps, key).items()}
    fresh = compute([run.id for run in runs if run.id not in kept])
    for run_id, value in fresh.items():
        if run_id in stamps:
            put(session, run_id, key, stamps[run_id], dump(value))
    return {**kept, **fresh}


def kept_arrays(session: Session, runs: Sequence[Run], key: str,
                compute: Callable[[list[int]], dict[int, NDArray[Any]]], dtype: np.dtype[Any]
                ) -> dict[int, NDArray[Any]]:
    """kept_many for NumPy arrays of `dtype`, kept as their raw bytes."""
    return kept_many(session, runs, key, compute, lambda rows: rows.tobytes(),
                     lambda payload: np.frombuffer(payload, dtype=dtype))


def kept_json(session: Session, run: Run, key: str,
              compute: Callable[[], Any]) -> Any:
    """`compute()` (JSON-ready), or what it gave last time for this run in this state."""
    return kept_many(session, [run], key, lambda ids: {run.id: compute()} if ids else {},
                     lambda value: json.dumps(value, separators=(",", ":")).encode(),
                     json.loads)[run.id]
