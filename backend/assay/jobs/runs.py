"""RQ entry point: a shard runner that keeps a window of a run's cells in flight.

It claims cells ahead of need (up to one window waiting beside the window in flight), and
writes finished results in small batches (by count or every FLUSH_S), so progress moves
while the run is going and the window never waits for its slowest call. Claims and
flushes run in threads, in the background: a slot that frees up is refilled at once, not
after the database has answered.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from datetime import timedelta
from typing import Any

from assay.core.runs import service
from assay.core.runs.engine import execute_cell
from assay.core.runs.service import Cell, CellResult
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


def _claim(rt: Runtime, run_id: int, owner: str, limit: int) -> list[Cell]:
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
    ready: deque[Cell] = deque()  # claimed, waiting for a free slot
    in_flight: set[asyncio.Task[CellResult]] = set()
    finished: list[CellResult] = []
    claiming: asyncio.Task[list[Cell]] | None = None
    flushing: asyncio.Task[None] | None = None
    exhausted, flushed_at = False, time.monotonic()
    try:
        while True:
            while ready and len(in_flight) < window:
                in_flight.add(asyncio.create_task(execute_cell(client, ready.popleft())))
            if claiming is None and not exhausted and len(ready) <= window // 2:
                # claim ahead, in chunks: a slot that frees up never waits for the database
                claiming = asyncio.create_task(
                    asyncio.to_thread(_claim, rt, run_id, owner, window - len(ready)))
            idle = not in_flight and not ready and claiming is None
            due = time.monotonic() - flushed_at >= FLUSH_S or len(finished) >= window // 2
            if flushing is None and finished and (due or idle):
                batch, finished, flushed_at = finished, [], time.monotonic()
                flushing = asyncio.create_task(asyncio.to_thread(_flush, rt, run_id, owner,
                                                                 batch))
            if idle and flushing is None and not finished:
                break
            waiting: set[asyncio.Future[Any]] = {*in_flight, *(t for t in (claiming, flushing)
                                                               if t is not None)}
            done, _ = await asyncio.wait(waiting, timeout=FLUSH_S,
                                         return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task is claiming:
                    claiming, cells = None, task.result()
                    exhausted = not cells
                    ready.extend(cells)
                elif task is flushing:
                    flushing = None
                    task.result()  # a failed write stops the shard: its leases expire
                else:
                    in_flight.discard(task)
                    finished.append(task.result())
        with rt.db.factory() as session:
            closed = service.finish_if_done(session, run_id)
        if closed is not None:
            rt.publish(run_id, FINISHED, service.progress(closed))
            log.info("run %s %s", run_id, closed.status)
    finally:
        for pending in (*in_flight, claiming, flushing):
            if pending is not None:
                pending.cancel()
        await client.aclose()
