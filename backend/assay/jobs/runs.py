"""RQ entry point: a shard runner that keeps a window of a run's cells in flight.

It claims cells ahead of need (up to one window waiting beside the window in flight),
journals each result in Redis as soon as its call returns (a slot is free again once its
result is journaled), and writes journaled results in batches, so progress moves while the
run is going and the window never waits for its slowest call. Claims, journal entries,
writes and lease renewals run in threads, in the background: a slot that frees up is
refilled at once, not after the database has answered. Several shards (on several workers)
share a run; a shard that dies leaves leases that expire, and the reaper enqueues a shard to
take them over, which records the journaled results of those cells instead of calling
again: a crash repeats at most the calls that were in flight.

The run's `concurrency` bounds its calls in flight across all its shards and workers, and a
credential's ceiling bounds them across all runs on it: a cell starts only on a slot of each
(slots.py), held from the call's start until its result is journaled.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from assay import aio
from assay.collections_policy import fewer_collections
from assay.core.runs import progress, service
from assay.core.runs.engine import Scoring, execute_cell, judge_bound
from assay.core.runs.models import STOPPED, RunStatus
from assay.core.runs.service import Cell, CellResult, Claim, Recorded
from assay.core.scoring import context as scoring_context
from assay.events import experiments as experiment_events
from assay.events.publish import BUDGET_ALERT, FINISHED, PROGRESS, STARTED
from assay.jobs import experiments as experiment_jobs
from assay.jobs import stops
from assay.jobs.journal import Journal, NoJournal
from assay.jobs.queues import enqueue_warm
from assay.jobs.slots import Holder, LocalSlots, Pool, Slots, credential_pool, run_pool
from assay.observability import tracing
from assay.providers.client import LLMClient, RetryPolicy
from assay.providers.ratelimit import from_settings as rate_limiter
from assay.runtime import Runtime, current
from assay.settings import lease_seconds

log = logging.getLogger(__name__)
LEASE = timedelta(seconds=lease_seconds())  # ASSAY_LEASE_S
FLUSH_S = 0.25
# In windows (the run's concurrency; a shard's part of it when shards share the run): claimed
# cells are topped up to CLAIM_AHEAD parts once no more than one part waits, results are
# written a part at a time, and calls start only while fewer than UNWRITTEN windows of
# results are not yet written. A claim or a write takes tens of milliseconds at a thousand
# calls a second: with less ahead, slots sat idle waiting for one or the other (measured on
# PostgreSQL at concurrency 200).
CLAIM_AHEAD = 2
UNWRITTEN = 4
BUDGET_WAIT_S = 0.2  # the caps are full of reservations: look again after this
CALL_TIMEOUT_S = 120.0  # wall clock, per attempt: long generations take a while
# a dead worker's slots come back after this (its cells' leases may take longer)
SLOT_LEASE_S = min(LEASE.total_seconds(), 20.0)


def execute_run(run_id: int) -> None:
    aio.run(_Shard(current(), run_id).run())


def publish(rt: Runtime, run_id: int, event_type: str) -> None:
    """Progress is best effort: a Redis outage must not stop the run (the database has
    everything; a client that reconnects gets the state from the snapshot)."""
    try:
        with rt.db.factory() as session:
            run = session.get(service.Run, run_id)
            payload = (progress.snapshot(session, run_id) if run is not None
                       else {"run_id": run_id})
        rt.publish(run_id, event_type, payload)
        base = _iteration_base(rt, run_id)
        if base is not None:  # its experiment's stream shows the counts too
            experiment_events.forward(rt, base, payload)
    except Exception as exc:  # any Redis failure: log and go on
        log.warning("run %s: %s event not published: %s", run_id, event_type, exc)


# run id -> its experiment's snapshot when it executes an iteration (None: it does not)
_ITERATION_RUNS: dict[int, dict[str, Any] | None] = {}


def _iteration_base(rt: Runtime, run_id: int) -> dict[str, Any] | None:
    if run_id not in _ITERATION_RUNS:
        with rt.db.factory() as session:
            base = experiment_events.base_snapshot(session, run_id)
        if len(_ITERATION_RUNS) > 10_000:
            _ITERATION_RUNS.clear()
        _ITERATION_RUNS[run_id] = base
    return _ITERATION_RUNS[run_id]


class _Shard:
    """`alone`: the only shard its run will ever have, in a process nothing else watches
    (`assay eval` locally): no journal, no shared slots and no events, so no Redis."""

    def __init__(self, rt: Runtime, run_id: int, *, alone: bool = False) -> None:
        self.rt, self.run_id, self.owner = rt, run_id, uuid.uuid4().hex
        self.batches = 0
        self.published_at = 0.0
        self.lease = LEASE
        self.alone = alone
        self.journal = NoJournal() if alone else Journal(
            rt.redis, rt.settings.redis_prefix, run_id, self.owner)
        self.slots = LocalSlots() if alone else Slots(
            rt.redis, rt.settings.redis_prefix, self.owner, SLOT_LEASE_S)
        self.judging: service.JudgeBound | None = None  # set with the run's scorers
        # SQLite lets one writer in at a time and has the others poll for the lock (sleeps
        # of 1 to 100 ms): this shard's claims, writes and renewals take turns on a lock of
        # their own instead, so the next starts the moment the last commits
        self.turn: AbstractContextManager[Any] = (threading.Lock() if rt.settings.is_sqlite
                                                  else nullcontext())
        # a pause or cancel aborts the calls in flight: its key is read with the slots'
        # round trips (a few a second), never per call
        self.stop = stops.Signal(None if alone else rt.redis,
                                 stops.key(rt.settings.redis_prefix, stops.RUN, run_id),
                                 self._stopped)
        self.stop_checked = 0.0
        self.answered: dict[int, CellResult] = {}  # replies whose judges are at work

    def _stopped(self) -> bool:
        with self.rt.db.factory() as session:
            status = session.scalar(select(service.Run.status).where(
                service.Run.id == self.run_id))
        return status in (RunStatus.paused, RunStatus.cancelled)

    def _sync(self, pools: list[Pool], wants: list[int]
              ) -> tuple[list[tuple[int, int, bool]], bool]:
        """The slots' round trip, and whether a stop came (looked at every POLL_S)."""
        answers = self.slots.sync(pools, wants)
        now = time.monotonic()
        if now - self.stop_checked < stops.POLL_S:
            return answers, False
        self.stop_checked = now
        return answers, self.stop.check()

    def _give_back(self, sent: list[int], unsent: list[int]) -> None:
        with self.turn, self.rt.db.factory() as session:
            service.give_back(session, self.run_id, self.owner, sent, unsent)

    def _publish(self, event_type: str) -> None:
        if not self.alone:
            publish(self.rt, self.run_id, event_type)

    def _claim(self, limit: int) -> tuple[Claim, dict[int, CellResult]]:
        """Claimed cells, and the journaled results of those taken over from a dead shard."""
        with self.turn, tracing.span("run.claim", **{"assay.run_id": self.run_id,
                                                     "assay.limit": limit}), \
                self.rt.db.factory() as session:
            claim = service.claim_cells(session, self.run_id, self.owner, limit, self.lease,
                                        self.rt.settings.secret_key, self.judging)
        return claim, self.journal.recall(claim.cells)

    def _flush(self, results: list[CellResult]) -> None:
        self.batches += 1
        with self.turn, tracing.span("run.record", **{"assay.run_id": self.run_id,
                                                      "assay.cells": len(results)}), \
                self.rt.db.factory() as session:
            recorded: Recorded = service.record_results(session, self.run_id, self.owner,
                                                        results, self.batches)
        self.journal.forget([r.output_id for r in results])
        if recorded.alert:
            self._publish(BUDGET_ALERT)
        now = time.monotonic()
        # writes come as often as results do; progress events at most every FLUSH_S
        if recorded.cells and now - self.published_at >= FLUSH_S:
            self.published_at = now
            self._publish(PROGRESS)

    def _renew(self, output_ids: list[int]) -> None:
        with self.turn, self.rt.db.factory() as session:
            service.renew_leases(session, self.owner, output_ids, self.lease)

    async def run(self) -> None:
        with fewer_collections():
            await self._run()

    async def _run(self) -> None:
        rt, run_id = self.rt, self.run_id
        with rt.db.factory() as session:
            started = service.start_run(session, run_id)
            window = service.run_concurrency(session, run_id, rt.settings.run_concurrency)
            timeout_s = service.call_timeout(session, run_id, CALL_TIMEOUT_S)
            retries = service.call_retries(session, run_id)
        if started:
            self._publish(STARTED)
        client = LLMClient(timeout_s=timeout_s, max_connections=window,
                           retry=RetryPolicy(attempts=retries + 1),
                           url_policy=rt.settings.url_policy,
                           limiter=rate_limiter(rt.settings))
        holder = Holder(self.slots, run_pool(run_id), window)
        try:
            await self._loop(client, window, self._scoring(client), holder)
        finally:
            await client.aclose()
            await asyncio.to_thread(holder.release_all)
        with rt.db.factory() as session:
            closed = service.finish_if_done(session, run_id)
            ended = closed is None and service.is_over(session, run_id)
            # stopped early (cancel, budget): the end comes once the last cell in flight
            # is recorded, by whichever shard records it; a run another shard closed had
            # its run.finished from that shard, and a late shard says nothing more
            stopped = ended and service.is_over(session, run_id, STOPPED)
        if closed is not None:
            self.journal.drop()
        if closed is not None or stopped:
            self._publish(FINISHED)
            if not self.alone:  # `assay eval`'s run: read once, from its own files, and
                # never an experiment's
                enqueue_warm(rt, run_id)  # its page and reports, filled before they are read
                experiment_jobs.run_finished(rt, run_id)  # an iteration's run: its next step
        elif not ended:  # paused, or other shards go on: the last counts, whatever the
            self._publish(PROGRESS)  # throttle held back
        if closed is not None:
            log.info("run %s %s", run_id, closed.status)

    def _scoring(self, client: LLMClient) -> Scoring:
        with self.rt.db.factory() as session:
            applied, ctx = scoring_context.for_run(session, self.run_id, client,
                                                   self.rt.settings.secret_key)
        scoring = Scoring(applied, ctx)
        self.judging = judge_bound(scoring)  # judges are reserved with the calls they judge
        return scoring

    async def _loop(self, client: LLMClient, window: int, scoring: Scoring,
                    holder: Holder) -> None:
        ready = _Ready(holder)  # claimed, waiting for a free slot
        in_flight: dict[asyncio.Task[CellResult], Cell] = {}
        returned: list[tuple[Cell, CellResult]] = []  # calls done, results not yet journaled
        finished: list[CellResult] = []  # journaled (or Redis refused them), not yet written
        claiming: asyncio.Task[tuple[Claim, dict[int, CellResult]]] | None = None
        journaling: asyncio.Task[bool] | None = None
        flushing: asyncio.Task[None] | None = None
        renewing: asyncio.Task[None] | None = None
        syncing: asyncio.Task[tuple[list[tuple[int, int, bool]], bool]] | None = None
        giving: asyncio.Task[None] | None = None
        stopping = False  # paused or cancelled: calls in flight aborted, claims given back
        aborted: tuple[list[int], list[int]] = ([], [])  # (sent, never sent): no reply
        asked: tuple[list[Pool], list[int]] = ([], [])
        # tasks report here when done: waking up costs the same with 1 or 500 in flight
        # (asyncio.wait would hook and unhook every pending task on each wake-up)
        completed: deque[asyncio.Task[Any]] = deque()
        wake = asyncio.Event()

        def report(task: asyncio.Task[Any]) -> None:
            completed.append(task)
            wake.set()

        def started(task: asyncio.Task[Any]) -> asyncio.Task[Any]:
            task.add_done_callback(report)
            return task

        exhausted = False
        entering: list[tuple[Cell, CellResult]] = []  # in the journal write under way
        writing = 0  # results in the database write under way
        finished_at = 0.0  # when the oldest result in `finished` got there
        renewed_at = time.monotonic()
        claim_after = 0.0  # monotonic time before which no claim is made (budget is full)
        ahead = 1  # parts claimed: the first claim is the shortest, so calls start soon
        try:
            while True:
                # A slot frees up once its result is in the journal: a worker that dies
                # repeats its calls in flight and no more (journaled results are recorded by
                # whoever takes its leases over). Unwritten results stay under a few windows,
                # so a slow database holds the calls back rather than piling results up.
                while ready and len(in_flight) + len(finished) + writing < UNWRITTEN * window:
                    cell = ready.pop()
                    if cell is None:  # no slot free: the run's, or the cell's credential's
                        break
                    in_flight[started(asyncio.create_task(
                        execute_cell(client, cell, scoring, self.answered)))] = cell
                now = time.monotonic()
                sync_in = holder.due(now) if syncing is None else FLUSH_S
                if sync_in == 0:  # ask for slots, give spare ones back, renew the lease
                    asked = holder.request()
                    if self.alone:  # nobody else to ask: granted at once, start the cells
                        holder.apply(*asked, self.slots.sync(*asked), now)
                        continue
                    syncing = started(asyncio.create_task(
                        asyncio.to_thread(self._sync, *asked)))
                    sync_in = FLUSH_S
                # this shard's part of the window: claimed ahead of what its slots can take,
                # a shard does not hold cells its siblings could run (a longer end)
                part = min(window, holder.run.share or window)
                if (claiming is None and not exhausted and len(ready) <= part
                        and now >= claim_after):
                    # claim ahead, in chunks: a slot that frees up never waits for the database
                    claiming = started(asyncio.create_task(
                        asyncio.to_thread(self._claim, ahead * part - len(ready))))
                if renewing is None and now - renewed_at >= self.lease.total_seconds() / 3:
                    held = [*(c.output_id for c in in_flight.values()),
                            *(c.output_id for c in ready)]
                    renewed_at = now
                    if held:
                        renewing = started(asyncio.create_task(
                            asyncio.to_thread(self._renew, held)))
                if giving is None and (aborted[0] or aborted[1]):
                    giving = started(asyncio.create_task(
                        asyncio.to_thread(self._give_back, *aborted)))
                    aborted = ([], [])
                if journaling is None and returned:
                    entering, returned = returned, []
                    journaling = started(asyncio.create_task(
                        asyncio.to_thread(self.journal.keep, entering)))
                idle = not in_flight and not ready and claiming is None and (
                    exhausted or now < claim_after)
                # journaled results are safe: they are written in batches (a part, or what
                # waited FLUSH_S), which costs the database far less than one by one
                if flushing is None and finished and (
                        len(finished) >= part or now - finished_at >= FLUSH_S
                        or not in_flight):
                    batch, finished, writing = finished, [], len(finished)
                    flushing = started(asyncio.create_task(
                        asyncio.to_thread(self._flush, batch)))
                if (idle and exhausted and journaling is None and not returned
                        and flushing is None and not finished and syncing is None
                        and giving is None and not aborted[0] and not aborted[1]):
                    break
                busy = bool(in_flight) or any(t is not None for t in (
                    claiming, journaling, flushing, renewing, giving))
                if not completed:
                    wake.clear()
                    try:
                        async with asyncio.timeout(min(
                                sync_in, FLUSH_S if busy else max(claim_after - now, 0.01))):
                            await wake.wait()
                    except TimeoutError:
                        pass
                while completed:
                    task = completed.popleft()
                    if task.cancelled():  # a call a stop closed (nothing else is cancelled)
                        cell = in_flight.pop(task)
                        kept = self.answered.pop(cell.output_id, None)
                        if kept is None:  # no reply: nothing billed, the cell is given back
                            ready.done(cell)
                            aborted[0].append(cell.output_id)
                        elif self.alone:
                            ready.done(cell)
                            finished.append(kept)
                        else:  # the reply came, its judges did not: recorded, billed
                            returned.append((cell, kept))
                        continue
                    result = task.result()  # a failed claim, write or renewal stops the
                    # shard: its leases expire and the reaper hands its cells to another
                    if task is claiming:
                        claiming, (claim, recalled) = None, result
                        ahead = CLAIM_AHEAD
                        if claim.waiting:  # reservations in flight hold the budget: wait
                            claim_after = time.monotonic() + BUDGET_WAIT_S
                        elif claim.skipped and not claim.cells:  # all priced out: the next
                            claim_after = 0.0  # cells may be cheaper, claim them at once
                        else:
                            exhausted = stopping or not claim.cells
                            # a dead shard's journaled results are recorded, not called again
                            if recalled and not finished:
                                finished_at = time.monotonic()
                            finished.extend(recalled.values())
                            fresh = [c for c in claim.cells if c.output_id not in recalled]
                            if stopping:
                                aborted[1].extend(c.output_id for c in fresh)
                            else:
                                ready.extend(fresh)
                    elif task is journaling:  # in Redis, or Redis refused: either way, on
                        journaling = None
                        if not finished:
                            finished_at = time.monotonic()
                        for cell, journaled in entering:
                            ready.done(cell)
                            finished.append(journaled)
                        entering = []
                    elif task is syncing:
                        syncing = None
                        granted, stop = result
                        holder.apply(*asked, granted, time.monotonic())
                        if stop and not stopping:  # abort: close the requests in flight
                            stopping = exhausted = True  # (a reply arriving is recorded)
                            client.stop()
                            aborted[1].extend(c.output_id for c in ready.drain())
                    elif task is flushing:
                        flushing, writing = None, 0
                    elif task is renewing:
                        renewing = None
                    elif task is giving:
                        giving = None
                    elif self.alone:  # no journal: the slot is free once the result is back
                        if not finished:
                            finished_at = time.monotonic()
                        ready.done(in_flight.pop(task))
                        finished.append(result)
                    else:
                        returned.append((in_flight.pop(task), result))
        finally:
            for pending in (*in_flight, claiming, journaling, flushing, renewing, syncing,
                            giving):
                if pending is not None:
                    pending.cancel()


class _Ready:
    """Claimed cells waiting for a slot, queued by the credential pool they need (None: the
    run's slots alone), so a credential at its ceiling holds back only its own cells.
    Counts what waits for, and what uses, each pool of the holder."""

    def __init__(self, holder: Holder) -> None:
        self.holder = holder
        self.queues: dict[str | None, deque[Cell]] = {}
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Cell]:
        for queue in self.queues.values():
            yield from queue

    def _pool(self, cell: Cell) -> Pool | None:
        if not cell.ceiling or cell.cache_hit is not None or cell.key_error is not None:
            return None  # no ceiling, or no call is made
        return self.holder.pool(credential_pool(cell.credential_id), cell.ceiling)

    def extend(self, cells: Iterable[Cell]) -> None:
        for cell in cells:
            pool = self._pool(cell)
            name = None if pool is None else pool.name
            queue = self.queues.get(name)
            if queue is None:
                queue = self.queues[name] = deque()
            queue.append(cell)
            self.count += 1
            self.holder.run.waiting += 1
            if pool is not None:
                pool.waiting += 1

    def pop(self) -> Cell | None:
        """The next cell that has a slot of each pool it needs (taken), else None."""
        run = self.holder.run
        if run.free() <= 0:
            return None
        for name, queue in self.queues.items():
            if not queue:
                continue
            pool = None if name is None else self.holder.pools[name]
            if pool is not None:
                if pool.free() <= 0:
                    continue
                pool.waiting -= 1
                pool.used += 1
            run.waiting -= 1
            run.used += 1
            self.count -= 1
            return queue.popleft()
        return None

    def drain(self) -> list[Cell]:
        """Every waiting cell, taken out (a stop gives them back unstarted)."""
        cells = list(self)
        for cell in cells:
            pool = self._pool(cell)
            if pool is not None:
                pool.waiting -= 1
        self.holder.run.waiting -= self.count
        self.queues.clear()
        self.count = 0
        return cells

    def done(self, cell: Cell) -> None:
        """The cell's result is journaled: its slots are free."""
        self.holder.run.used -= 1
        pool = self._pool(cell)
        if pool is not None:
            pool.used -= 1
