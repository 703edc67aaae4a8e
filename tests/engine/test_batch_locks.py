"""A shard writing its finished batch holds its own cells, and the run row only to move the
counters (PostgreSQL row locks; `core/runs/locks.py`): claims and the reaper go on
meanwhile, nothing deadlocks, and every cell lands once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from assay.core.runs import service
from assay.core.runs.models import CellStatus, Output, Run
from assay.core.runs.service import CellResult
from assay.extensions import db
from assay.settings import Settings
from tests.engine.test_reaper import claim_as_dead_owner, make_run
from tests.factories import Factory

LEASE = timedelta(minutes=5)
WAIT_S = 10.0  # what a blocked lock would wait at most before the test says so


@pytest.fixture(autouse=True)
def postgres_only(app: Flask) -> None:
    if db.engine.dialect.name != "postgresql":
        pytest.skip("row locks: PostgreSQL only (SQLite lets one writer in at a time)")


def replies(ids: list[int]) -> list[CellResult]:
    return [CellResult(output_id=oid, ok=True, text=f"reply {oid}", tokens_in=3,
                       tokens_out=5, cost_micros=7, latency_ms=100, calls=1) for oid in ids]


@contextmanager
def paused_after_cells(meanwhile: Callable[[], Any]) -> Iterator[dict[str, Any]]:
    """record_results, paused once it has written (and holds) its cells, while `meanwhile`
    runs in another session and commits; yields what `meanwhile` returned."""
    seen: dict[str, Any] = {}
    real = service._write_outputs

    def write_outputs(*args: Any) -> Any:
        written = real(*args)
        outcome: list[Any] = []
        other = threading.Thread(target=lambda: outcome.append(meanwhile()))
        other.start()
        other.join(WAIT_S)
        seen["meanwhile"] = outcome[0] if outcome else TimeoutError(
            "blocked behind the batch being written")
        return written

    service._write_outputs = write_outputs  # type: ignore[assignment]
    try:
        yield seen
    finally:
        service._write_outputs = real  # type: ignore[assignment]


def in_session(work: Callable[[Session], Any]) -> Callable[[], Any]:
    def go() -> Any:
        with db.factory() as session:
            # fail fast instead of hanging if the lock order is broken
            session.execute(text(f"SET LOCAL lock_timeout = '{int(WAIT_S * 1000)}ms'"))
            return work(session)
    return go


def test_a_claim_goes_on_while_a_batch_is_written(factory: Factory, settings: Settings) -> None:
    run_id = make_run(factory)
    with db.factory() as session:
        mine = service.claim_cells(session, run_id, "writer", 4, LEASE,
                                   settings.secret_key)
    ids = [c.output_id for c in mine.cells]
    claim = in_session(lambda s: service.claim_cells(
        s, run_id, "other", 6, LEASE, settings.secret_key))
    with paused_after_cells(claim) as seen, db.factory() as session:
        recorded = service.record_results(session, run_id, "writer", replies(ids))
    other = seen["meanwhile"]
    assert not isinstance(other, Exception), other
    assert len(other.cells) == 6 and not {c.output_id for c in other.cells} & set(ids)
    assert recorded.cells == 4
    with db.factory() as session:
        run = session.get(Run, run_id)
        assert run is not None and run.succeeded == 4 and run.spent_micros == 28
        states = dict(session.execute(select(Output.lease_owner, Output.status)
                                      .where(Output.run_id == run_id,
                                             Output.status == CellStatus.running)).all())
        assert states == {"other": CellStatus.running}


def test_the_reaper_leaves_a_batch_being_written_to_its_shard(factory: Factory) -> None:
    """A slow shard's lease expired while it writes its batch: the reaper (which holds the
    run row) skips those cells instead of waiting for them, so the two cannot deadlock,
    and the batch lands as written (nothing skipped, nothing counted twice)."""
    run_id = make_run(factory)
    ids = claim_as_dead_owner(run_id, 5, expires_in_s=-1)
    reap = in_session(lambda s: (service.skip_expired_cells(s, run_id, "cancelled", "gone"),
                                 s.commit())[0])
    with paused_after_cells(reap) as seen, db.factory() as session:
        recorded = service.record_results(session, run_id, "dead-shard", replies(ids))
    assert seen["meanwhile"] == 0, seen["meanwhile"]
    assert recorded.cells == 5
    with db.factory() as session:
        run = session.get(Run, run_id)
        assert run is not None and (run.succeeded, run.skipped) == (5, 0)
        statuses = list(session.scalars(select(Output.status).where(Output.id.in_(ids))))
        assert statuses == [CellStatus.succeeded] * 5
