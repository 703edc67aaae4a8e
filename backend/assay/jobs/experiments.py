"""RQ entry points of the experiment loop, and its dispatcher.

A run's finalisation (the shard that closes it, the reaper, a stop for budget) calls
`run_finished`, which moves the iteration the run executes to judging or aggregating and
enqueues `advance`: no job waits on a run. `advance` does the steps after the run, one at a
time from the iteration's status (judging -> aggregating -> refining -> awaiting review),
under a Redis lock per iteration so two jobs never ask the judges or the refiner twice; a
job killed midway leaves the status where it was, and the reaper's `stale` check enqueues
it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import ledger
from assay.core.base import utcnow
from assay.core.experiments import loop, pairwise, phases, spend
from assay.core.experiments import refiner as ref
from assay.core.experiments.models import Iteration, IterationStatus
from assay.core.runs.models import TERMINAL, Run
from assay.core.scoring import pairwise_runs
from assay.core.scoring.judge_calls import ModelJudge
from assay.core.scoring.pairwise_runs import Pair
from assay.events.experiments import publish_experiment
from assay.jobs import stops
from assay.jobs.comparisons import BATCH, CONCURRENT, judge_pair
from assay.jobs.queues import enqueue_run
from assay.providers.client import LLMClient
from assay.runtime import Runtime, current
from assay.scorers.base import Context, Subject

log = logging.getLogger(__name__)
LOCK_S = 600  # a refiner's retries fit in it; a dead job's lock frees itself
STALE = timedelta(minutes=5)  # a step not done by then had its job die


def install(rt: Runtime) -> None:
    """Let the loop enqueue work after its transactions commit (API and workers)."""

    def dispatch(kind: str, ident: int) -> None:
        if kind == loop.RUN:
            enqueue_run(rt, ident)
        else:
            enqueue_advance(rt, ident)

    loop.set_dispatcher(dispatch)


def enqueue_advance(rt: Runtime, iteration_id: int) -> None:
    from rq import Queue  # here: the run engine imports this module, `assay eval` too

    Queue(rt.settings.runs_queue, connection=rt.redis).enqueue(
        "assay.jobs.experiments.advance", iteration_id, job_timeout=LOCK_S,
        result_ttl=600, failure_ttl=7 * 86400)


def run_finished(rt: Runtime, run_id: int) -> None:
    """The hook at a run's finalisation: advance the iteration it executes, if any."""
    try:
        with rt.db.factory() as session:
            iteration_id = loop.run_finished(session, run_id)
        if iteration_id is not None:
            _publish(rt, iteration_id)
            if not loop.has_dispatcher():
                install(rt)
            loop.dispatch(loop.ADVANCE, iteration_id)
    except Exception as exc:  # the reaper's stale check picks it up
        log.warning("run %s: the experiment step was not enqueued: %s", run_id, exc)


def _publish(rt: Runtime, iteration_id: int) -> None:
    try:
        with rt.db.factory() as session:
            publish_experiment(rt, session, iteration_id)
    except Exception as exc:  # progress is best effort
        log.warning("iteration %s: progress not published: %s", iteration_id, exc)


def advance(iteration_id: int) -> str:
    """Do the iteration's next steps; returns the last one's outcome."""
    rt = current()
    if not loop.has_dispatcher():
        install(rt)
    lock = rt.redis.lock(_lock_key(rt, iteration_id), timeout=LOCK_S, blocking_timeout=0)
    if not lock.acquire():
        return "busy"  # another job is on it
    try:
        judged = _judge_pairs(rt, iteration_id)
        if judged == phases.PAUSED:
            _publish(rt, iteration_id)
            return phases.PAUSED
        short = judged if judged not in (phases.AGGREGATE, phases.NOTHING) else None
        with rt.db.factory() as session:
            outcome = phases.aggregate_iteration(session, iteration_id, short)
        _publish(rt, iteration_id)
        if outcome in (phases.REFINE, phases.NOTHING):
            outcome = _refine(rt, iteration_id)
            _publish(rt, iteration_id)
        return outcome
    finally:
        with contextlib.suppress(Exception):  # expired: nothing of ours to release
            lock.release()


def _judge_pairs(rt: Runtime, iteration_id: int) -> str:
    """The judging phase (pairwise vs the previous iteration), batch by batch: each pair's
    most cost held before it is judged, settled into the judging phase with its rows; a
    pause or a cancel stops it between batches (PAUSED). Returns AGGREGATE when every pair
    is judged, the sentence saying so when a cap could not cover the next pair, NOTHING
    when the iteration is not judging."""
    with rt.db.factory() as session:
        job = pairwise.prepare(session, iteration_id, rt.settings.secret_key)
    if job is None:
        return phases.NOTHING

    async def judge_all() -> tuple[bool, int]:
        """(whether the phase ran to its end, pairs judged before the budget ran out: -1
        when it never did)."""
        judged_so_far = 0
        gate = asyncio.Semaphore(CONCURRENT)
        client = LLMClient(url_policy=rt.settings.url_policy)

        def halted() -> bool:
            with rt.db.factory() as session:
                return not pairwise.judging(session, iteration_id)

        # a pause or a cancel closes the judges' requests in flight (stops.py)
        async with client, stops.watching(stops.signal(
                rt, stops.ITERATION, iteration_id, halted), client.stop) as watch:
            models = ModelJudge(client, job.judges)
            for start in range(0, len(job.pairs), BATCH):
                with rt.db.factory() as session:
                    if watch.stopped or not pairwise.judging(session, iteration_id):
                        return False, -1  # paused or cancelled meanwhile
                    found = pairwise_runs.subjects(session, [
                        i for p in job.pairs[start:start + BATCH]
                        for i in (p.output_a_id, p.output_b_id)])
                    ready = [p for p in job.pairs[start:start + BATCH]
                             if p.output_a_id in found and p.output_b_id in found]
                    held = _hold(session, job, ready, found)
                    session.commit()
                meters = [ledger.Metered(models) for _ in held]  # count calls as they land
                judged: list[Any] = [None] * len(held)  # each pair's rows, once judged
                try:
                    judged = await asyncio.gather(*(
                        _pair(job, meter, gate, pair, found)
                        for (pair, _), meter in zip(held, meters, strict=True)),
                        return_exceptions=True)
                    for outcome in judged:  # a bug fails the step, a stop does not
                        if isinstance(outcome, BaseException) and not isinstance(
                                outcome, asyncio.CancelledError):
                            raise outcome
                finally:  # what the provider answered is paid for, a pair cut or not
                    with rt.db.factory() as session:
                        for (pair, hold), meter, rows in zip(held, meters, judged,
                                                             strict=True):
                            spend.settle(session, hold, "judging", meter.tab, iteration_id)
                            if isinstance(rows, list):  # judged: its verdicts kept
                                pairwise_runs.write_comparisons(session, job.version_id,
                                                                [pair], rows)
                        session.commit()
                if watch.stopped:
                    return False, -1
                judged_so_far += len(held)
                if len(held) < len(ready):  # the budget cannot cover the next pair
                    return True, judged_so_far
        return True, -1

    ended, short_at = asyncio.run(judge_all())
    with rt.db.factory() as session:
        if not ended or not pairwise.done(session, iteration_id):
            return phases.PAUSED
    if short_at >= 0:
        return (f"Budget reached while judging pairs: {short_at} of {len(job.pairs)} "
                "compared with the previous iteration")
    return phases.AGGREGATE


def _hold(session: Session, job: pairwise.PairwiseJob, pairs: list[Pair],
          found: dict[int, Subject]) -> list[tuple[Pair, spend.Hold]]:
    """Each pair's most cost held, in order, until a cap cannot cover the next one."""
    held: list[tuple[Pair, spend.Hold]] = []
    for pair in pairs:
        most = pairwise.max_pair_cost(job, found[pair.output_a_id], found[pair.output_b_id])
        try:
            held.append((pair, spend.reserve(session, job.project_id, job.experiment_id,
                                              most, "the next pairwise judgement")))
        except spend.BudgetExceeded:
            break
    return held


async def _pair(job: pairwise.PairwiseJob, meter: ledger.Metered, gate: asyncio.Semaphore,
                pair: Pair, found: dict[int, Subject]) -> list[dict[str, Any]]:
    async with gate:
        verdicts = await judge_pair(job.scorer, found[pair.output_a_id],
                                    found[pair.output_b_id], Context(judge=meter))
    return pairwise_runs.comparison_rows(job.run_id, job.version_id, pair, verdicts)


def _refine(rt: Runtime, iteration_id: int) -> str:
    with rt.db.factory() as session:
        job = phases.prepare_refinement(session, iteration_id, rt.settings.secret_key)
    if job is None:
        return phases.NOTHING
    purse = phases.Purse(rt.db.factory, job)

    async def call() -> ref.Outcome:
        async with LLMClient(url_policy=rt.settings.url_policy) as client:
            return await ref.refine(client, job.model, job.brief, purse)

    outcome = asyncio.run(call())
    with rt.db.factory() as session:
        return phases.record_refinement(session, job, outcome)


def stale(rt: Runtime) -> list[int]:
    """Iterations whose step has no job (it died, or the hook never ran): what the dead job
    held against the budgets is released and the step enqueued again. Called by the
    reaper."""
    cutoff = utcnow() - STALE
    with rt.db.factory() as session:
        stuck = list(session.scalars(select(Iteration.id).where(
            Iteration.paused.is_(False),
            Iteration.status.in_([IterationStatus.judging, IterationStatus.aggregating,
                                  IterationStatus.refining]),
            Iteration.phase_started_at < cutoff)))
        ended_runs = list(session.scalars(select(Iteration.run_id).join(
            Run, Run.id == Iteration.run_id).where(
            Iteration.status == IterationStatus.executing,
            Run.status.in_([s.value for s in TERMINAL]))))
    for run_id in ended_runs:
        if run_id is not None:
            run_finished(rt, run_id)
    for iteration_id in stuck:
        if rt.redis.exists(_lock_key(rt, iteration_id)):
            continue  # a long phase whose job is still at it
        _release_orphaned(rt, iteration_id)
        enqueue_advance(rt, iteration_id)
    return stuck


def _lock_key(rt: Runtime, iteration_id: int) -> str:
    return f"{rt.settings.redis_prefix}:iteration:{iteration_id}"


def _release_orphaned(rt: Runtime, iteration_id: int) -> None:
    """The dead job's holds (the judges' or the refiner's calls it had in flight) go back;
    the step repeated makes its own."""
    with rt.db.factory() as session:
        experiment_id = session.scalar(select(Iteration.experiment_id).where(
            Iteration.id == iteration_id))
        if experiment_id is not None:
            released = spend.release_orphaned(session, experiment_id)
            session.commit()
            if released:
                log.warning("experiment %s: %s micro-dollars held by a dead job released",
                            experiment_id, released)
