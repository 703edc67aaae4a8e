"""Stop requests: a cancel or a pause reaches the work in flight, which aborts its calls.

The one mechanism for every kind of work that calls a provider: a run's shards, an
experiment iteration's judging, a run's scoring job, its pairwise comparisons, a
generation job. A Redis key per subject tells the workers to look now; its value is the
time of the request.
The key is only a hint: a worker that sees a value it has not seen yet asks its own
source of truth (the run's status, the iteration's...) and aborts only when that says so,
so a key left from before a resume stops nothing. Work with no row of its own (a job)
takes a request made after it was enqueued as the truth. Watchers read the key a few
times a second at most, never per call (DESIGN.md section 9: no Redis round trip per
call).

Aborting stops the job's LLM client (`LLMClient.stop`): the HTTP requests with no reply
arriving are closed, so the provider never answers them and bills nothing for them; a
reply already arriving is read, and whatever the provider answered is recorded and billed
as usual.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import redis

    from assay.core.projects.deletion import Stopping
    from assay.runtime import Runtime

log = logging.getLogger(__name__)
KEEP_S = 7 * 24 * 3600  # outlives any job; a value already seen costs one check per worker
POLL_S = 0.2  # how often a watcher looks (one GET), whatever the calls in flight

RUN = "run"  # a run's shards (the run's status says)
ITERATION = "iteration"  # an experiment iteration's judging phase (its status says)
SCORING = "scoring"  # a run's scoring jobs (a request after the job was enqueued)
COMPARISONS = "comparisons"  # a run's pairwise comparison jobs (the same)
GENERATION = "generation"  # a generation job (the same)


def key(prefix: str, kind: str, ident: object) -> str:
    return f"{prefix}:stop:{kind}:{ident}"


def request(rt: Runtime, kind: str, ident: object) -> None:
    """Tell the workers of `kind` `ident` to look at its state now (after the commit that
    cancelled or paused it). Best effort: without Redis the calls in flight finish and are
    recorded, as they are billed."""
    try:
        rt.redis.set(key(rt.settings.redis_prefix, kind, ident), repr(time.time()), ex=KEEP_S)
    except Exception as exc:
        log.warning("%s %s: the stop was not signalled to its workers: %s", kind, ident, exc)


def stop_project(rt: Runtime, stopping: Stopping) -> None:
    """A project was deleted (committed): every worker on its work hears it, in one round
    trip: its cancelled runs' shards and iterations' judges, its runs' scoring and pairwise
    jobs, its generation jobs not ended. A job of the project enqueued since is stopped as
    soon as it starts watching."""
    from assay.core.generation import store

    prefix = rt.settings.redis_prefix
    subjects = ([(RUN, i) for i in stopping.runs] + [(ITERATION, i) for i in stopping.iterations]
                + [(kind, i) for i in stopping.every_run for kind in (SCORING, COMPARISONS)])
    try:
        subjects += [(GENERATION, i) for i in store.active_ids(rt.redis, prefix,
                                                                stopping.project_id)]
        pipe, now = rt.redis.pipeline(transaction=False), repr(time.time())
        for kind, ident in subjects:
            pipe.set(key(prefix, kind, ident), now, ex=KEEP_S)
        pipe.execute()
    except Exception as exc:
        log.warning("project %s: its stop was not signalled to its workers: %s",
                    stopping.project_id, exc)


class Signal:
    """One worker's view of a subject's stop key. `check()` (blocking: call it in a thread)
    returns True once the key holds a value not seen before and `confirmed()` (the source
    of truth) says the work must stop."""

    def __init__(self, conn: redis.Redis | None, name: str,
                 confirmed: Callable[[], bool] = lambda: True,
                 after: float | None = None) -> None:
        """`after`: a request older than this (when the job was enqueued) is not for it."""
        self.conn, self.name, self.confirmed, self.after = conn, name, confirmed, after
        self.seen: bytes | None = None

    def check(self) -> bool:
        if self.conn is None:
            return False
        try:
            value = self.conn.get(self.name)
        except Exception:  # Redis away: the work goes on, and is recorded as it lands
            return False
        if value is None or value == self.seen:
            return False
        self.seen = value
        if self.after is not None and _asked_at(value) < self.after:
            return False
        return self.confirmed()


def _asked_at(value: bytes) -> float:
    try:
        return float(value)
    except ValueError:  # not a time: a request of unknown age stops the work
        return float("inf")


def signal(rt: Runtime, kind: str, ident: object, confirmed: Callable[[], bool] = lambda: True,
           after: float | None = None) -> Signal:
    return Signal(rt.redis, key(rt.settings.redis_prefix, kind, ident), confirmed, after)


class Watch:
    """`stopped`: the signal fired and the work was told to stop."""

    stopped = False


@asynccontextmanager
async def watching(stop: Signal, on_stop: Callable[[], None]) -> AsyncIterator[Watch]:
    """Look at `stop` every POLL_S (in a thread) while the block runs; once it fires, call
    `on_stop` (on this loop: e.g. the block's `LLMClient.stop`) and look no more."""
    watch = Watch()

    async def look() -> None:
        while True:
            await asyncio.sleep(POLL_S)
            if await asyncio.to_thread(stop.check):
                watch.stopped = True
                on_stop()
                return

    looking = asyncio.create_task(look())
    try:
        yield watch
    finally:
        looking.cancel()


def enqueued_at() -> float:
    """When the current RQ job was enqueued (now, outside a job): a stop of a job kind
    requested since then is for it, one requested before is not."""
    from rq import get_current_job

    job = get_current_job()
    when = job.enqueued_at if job is not None else None
    if when is None:
        return time.time()
    if when.tzinfo is None:  # RQ keeps UTC without saying so
        from datetime import UTC
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


T = TypeVar("T")


def uncut(items: list[T], outcomes: list[Any]) -> list[tuple[T, Any]]:
    """The items whose work a cancel did not cut, with their results (`asyncio.gather`'s
    `return_exceptions=True` outcomes, in the items' order). A bug is the job's failure and
    is raised; a cancel is not: its items are left for a later job."""
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(
                outcome, asyncio.CancelledError):
            raise outcome
    return [(item, outcome) for item, outcome in zip(items, outcomes, strict=True)
            if not isinstance(outcome, BaseException)]
