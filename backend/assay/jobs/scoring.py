"""RQ entry point: score a run's recorded outputs that its scorers have not scored yet
(trace and judge-mode runs, whose outputs exist before any call; scorers added later).

One job scores a run at a time (a Redis lock, renewed per page): a second job, enqueued
when scorers are added while the first is going, waits and then scores what is still
missing, instead of writing the same scores twice."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from redis.exceptions import LockError
from redis.lock import Lock

from assay import aio
from assay.core import ledger
from assay.core.runs import cache as run_cache
from assay.core.runs import judge_budget, judge_spend
from assay.core.scoring import apply, backfill
from assay.core.scoring import context as scoring_context
from assay.events.publish import SCORING_FINISHED  # the job ended: {scores, stopped?}
from assay.jobs import stops
from assay.jobs.queues import SCORING_TIMEOUT_S, enqueue_warm, scoring_keys
from assay.providers.client import LLMClient
from assay.runtime import Runtime, current

log = logging.getLogger(__name__)
PAGE = 200  # outputs read per page; scored concurrently, written in one transaction
SCORED = "run.scored"  # {scores: written so far, stopped: why it ends early}
LOCK_S = int(judge_spend.LEASE.total_seconds())  # a dead job's lock frees itself
WAIT_S = SCORING_TIMEOUT_S  # the job's own timeout


def score_run(run_id: int) -> int:
    """Returns how many scores were written."""
    rt = current()
    lock_key, pending_key = scoring_keys(rt, run_id)
    lock = rt.redis.lock(lock_key, timeout=LOCK_S, blocking_timeout=WAIT_S)
    if not lock.acquire():
        raise TimeoutError(f"run {run_id}: another scoring job held the run for {WAIT_S}s")
    rt.redis.delete(pending_key)  # the lock says it now
    try:
        return aio.run(_score_run(rt, run_id, lock))
    finally:
        try:
            lock.release()
        except LockError:  # expired and maybe taken: nothing of ours to release
            log.warning("run %s: the scoring lock expired before the job ended", run_id)
        enqueue_warm(rt, run_id)  # what was kept of the run's scores is filled again


def _publish(rt: Runtime, run_id: int, progress: dict[str, Any],
             event_type: str = SCORED) -> None:
    try:  # progress is best effort; the scores are in the database
        rt.publish(run_id, event_type, progress)
    except Exception as exc:
        log.warning("run %s: scoring progress not published: %s", run_id, exc)


def _unscored(tabs: dict[int, ledger.Tab], scored: set[int]
              ) -> tuple[ledger.Tab, dict[int, int]]:
    """What the judges of the outputs left unscored cost: in all, and by output."""
    cut, costs = ledger.Tab(), {}
    for output_id, tab in tabs.items():
        if output_id not in scored:
            cut.merge(tab)
            if tab.spent_micros:
                costs[output_id] = tab.spent_micros
    return cut, costs


async def _score_run(rt: Runtime, run_id: int, lock: Lock) -> int:
    written, after, stopped = 0, 0, False
    halt: str | None = None  # why it ends early: the budget, or a cancel
    client = LLMClient(url_policy=rt.settings.url_policy)
    # a cancel closes the judges' requests; the outputs judged by then are written
    async with client, stops.watching(stops.signal(
            rt, stops.SCORING, run_id, after=stops.enqueued_at()), client.stop) as watch:
        with rt.db.factory() as session:
            applied, ctx = scoring_context.for_run(session, run_id, client,
                                                   rt.settings.secret_key)
        while applied and not watch.stopped:
            with rt.db.factory() as session:
                pending, next_after = backfill.unscored(session, run_id, applied, after, PAGE)
            if next_after is None:
                break
            after = next_after
            with rt.db.factory() as session:  # the judges of the page, reserved first
                fit, reserved = judge_spend.reserve(
                    session, run_id, judge_budget.recorded_bounds(applied, ctx, pending))
            stopped = fit < len(pending)
            pending = pending[:fit]
            # each output's judge calls counted as they land: an output a cancel cut is
            # not scored, but the judges that answered for it are billed, so charged
            tabs = {p.output_id: ledger.Tab() for p in pending}
            try:
                outcomes = await asyncio.gather(*(apply.score_subject(
                    [a for a in applied if a.version_id in p.missing], p.subject, ctx,
                    tabs[p.output_id]) for p in pending), return_exceptions=True)
                done = stops.uncut(pending, outcomes)  # an output a cancel cut: a later job's
                cut, costs = _unscored(tabs, {p.output_id for p, _ in done})
                pending, scored = [p for p, _ in done], [o for _, o in done]
                rows = [apply.score_row(run_id, p.output_id, p.target_id, p.case_id, s)
                        for p, scores in zip(pending, scored, strict=True) for s in scores]
                costs.update({p.output_id: cost for p, scores in zip(pending, scored,
                                                                     strict=True)
                              if (cost := judge_spend.judge_cost(scores))})
                with rt.db.factory() as session:
                    apply.insert_scores(session, rows)
                    run_cache.scores_changed(session, run_id)  # a rescored run's numbers
                    judge_spend.settle(session, run_id, reserved, costs,
                                       [s for scores in scored for s in scores], cut)
                    session.commit()
            except BaseException:  # nothing written; what was sent is paid, the rest back
                with rt.db.factory() as session:
                    cut, costs = _unscored(tabs, set())
                    judge_spend.settle(session, run_id, reserved, costs, (), cut)
                    session.commit()
                raise
            written += len(rows)
            lock.reacquire()
            halt = "cancelled" if watch.stopped else "budget_exceeded" if stopped else None
            progress: dict[str, Any] = {"run_id": run_id, "scores": written}
            if halt:
                progress["stopped"] = halt
            _publish(rt, run_id, progress)
            if stopped and not watch.stopped:
                log.warning("run %s: scoring stopped: the budget has no room for the judges "
                            "of the next outputs", run_id)
                break
        if watch.stopped:
            halt = "cancelled"
    final: dict[str, Any] = {"run_id": run_id, "scores": written}
    if halt:
        final["stopped"] = halt
    _publish(rt, run_id, final, SCORING_FINISHED)
    log.info("run %s: %s scores written", run_id, written)
    return written

