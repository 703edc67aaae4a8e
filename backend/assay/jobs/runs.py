"""RQ entry point: a shard runner that keeps a window of a run's cells in flight.

It claims cells as slots free up, and writes finished results in small batches (by count
or every FLUSH_S), so progress moves while the run is going and the window never waits
for its slowest call.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from datetime import timedelta

from assay.core.runs import service
from assay.core.runs.engine import execute_cell
from assay.core.runs.service import CellResult
from assay.events.publish import FINISHED, PROGRESS, STARTED
from assay.providers.client import LLMClient
from assay.runtime import Runtime, current

log = logging.getLogger(__name__)
LEASE = timedelta(minutes=5)
FLUSH_S = 0.25
CALL_TIMEOUT_S = 120.0  # wall clock, per attempt: long generations take a while


def execute_run(run_id: int) -> None:
    asyncio.run(_execute(current(), run_id))


def _flush(rt: Runtime, run_id: int, owner: str, results: list[CellResult]) -> None:
    with rt.db.factory() as session:
        recorded = service.record_results(session, run_id, owner, results)
    if recorded is not None:
        rt.publish(run_id, PROGRESS, service.progress(recorded))


def _claim(rt: Runtime, run_id: int, owner: str, limit: int) -> list[service.Cell]:
    with rt.db.factory() as session:
        return service.claim_cells(session, run_id, owner, limit, LEASE, rt.settings.secret_key)


async def _execute(rt: Runtime, run_id: int) -> None:
    owner = uuid.uuid4().hex
    with rt.db.factory() as session:
        if service.start_run(session, run_id):
            run = service.refresh_counts(session, run_id)
            rt.publish(run_id, STARTED, service.progress(run))
        window = service.run_concurrency(session, run_id, rt.settings.run_concurrency)
        timeout_s = service.call_timeout(session, run_id, CALL_TIMEOUT_S)
    client = LLMClient(timeout_s=timeout_s, max_connections=window,
                       allow_private=not rt.settings.block_private_urls)
    in_flight: set[asyncio.Task[CellResult]] = set()
    finished: list[CellResult] = []
    exhausted, flushed_at = False, time.monotonic()
    try:
        while True:
            free = window - len(in_flight)
            if not exhausted and free >= max(1, window // 4):  # claim in chunks, not per call
                cells = await asyncio.to_thread(_claim, rt, run_id, owner, free)
                exhausted = not cells
                in_flight.update(asyncio.create_task(execute_cell(client, c)) for c in cells)
            if not in_flight and not finished:
                break
            if in_flight:
                done, in_flight = await asyncio.wait(in_flight, timeout=FLUSH_S,
                                                     return_when=asyncio.FIRST_COMPLETED)
                finished.extend(task.result() for task in done)
            due = time.monotonic() - flushed_at >= FLUSH_S or len(finished) >= window // 2
            if finished and (due or not in_flight):
                await asyncio.to_thread(_flush, rt, run_id, owner, finished)
                finished, flushed_at = [], time.monotonic()
        with rt.db.factory() as session:
            closed = service.finish_if_done(session, run_id)
        if closed is not None:
            rt.publish(run_id, FINISHED, service.progress(closed))
            log.info("run %s %s", run_id, closed.status)
    finally:
        for task in in_flight:
            task.cancel()
        await client.aclose()
