"""RQ entry point: compare the outputs of two targets of a run (or a target of the run with
one of a base run), case by case, with a pairwise judge scorer version (both orders per
judge), and record one Comparison row per pair and judge."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from assay.core import ledger
from assay.core.runs import judge_spend
from assay.core.scoring import pairwise_runs
from assay.core.scoring.judge_calls import ModelJudge, judge_models
from assay.core.scoring.pairwise_runs import Pair
from assay.jobs import stops
from assay.providers.client import LLMClient
from assay.runtime import Runtime, current
from assay.scorers.base import Context, PairVerdict, PairwiseScorer, Subject

log = logging.getLogger(__name__)
CONCURRENT = 16  # pairs judged at once (each asks every judge twice)
BATCH = 4 * CONCURRENT  # pairs read, judged and written per transaction
COMPARED = "run.compared"


def compare_targets(run_id: int, scorer_version_id: int, target_a_id: int,
                    target_b_id: int, base_run_id: int | None = None) -> int:
    """Returns how many comparison rows were written. Target B is of `base_run_id` when
    given; progress is published on `run_id`'s stream either way."""
    return asyncio.run(_compare_targets(current(), run_id, scorer_version_id, target_a_id,
                                        target_b_id, base_run_id))


async def _compare_targets(rt: Runtime, run_id: int, version_id: int, target_a_id: int,
                           target_b_id: int, base_run_id: int | None) -> int:
    with rt.db.factory() as session:
        setup = pairwise_runs.scorer_of(session, run_id, version_id)
        if setup is None:
            log.warning("run %s: scorer version %s gone, nothing compared", run_id, version_id)
            return 0
        project_id, scorer = setup
        plan = pairwise_runs.plan_pairs(session, run_id, version_id, scorer.judges,
                                        target_a_id, target_b_id, base_run_id)
        judges = judge_models(session, project_id, scorer.judges, rt.settings.secret_key)
    progress: dict[str, Any] = {
        "run_id": run_id, "scorer_version_id": version_id, "target_a_id": target_a_id,
        "target_b_id": target_b_id, "base_run_id": base_run_id, "pairs": len(plan.pairs),
        "compared": 0, "comparisons": 0}
    purpose = "pairwise_runs" if base_run_id is not None else "pairwise_targets"
    gate = asyncio.Semaphore(CONCURRENT)
    client = LLMClient(url_policy=rt.settings.url_policy)
    # a cancel closes the judges' requests: the pairs judged by then are written, and every
    # judge call the provider answered is on the ledger (the tab counts them as they land)
    async with client, stops.watching(stops.signal(
            rt, stops.COMPARISONS, run_id, after=stops.enqueued_at()), client.stop) as watch:
        models = ModelJudge(client, judges)

        async def judged(pair: Pair, found: dict[int, Subject],
                         tab: ledger.Tab) -> list[dict[str, Any]]:
            async with gate:
                verdicts = await judge_pair(scorer, found[pair.output_a_id],
                                            found[pair.output_b_id],
                                            Context(judge=ledger.Metered(models, tab)))
            return pairwise_runs.comparison_rows(run_id, version_id, pair, verdicts)

        for start in range(0, len(plan.pairs), BATCH):
            if watch.stopped:
                break
            with rt.db.factory() as session:
                found = pairwise_runs.subjects(session, [
                    i for p in plan.pairs[start:start + BATCH]
                    for i in (p.output_a_id, p.output_b_id)])
            batch = [p for p in plan.pairs[start:start + BATCH]
                     if p.output_a_id in found and p.output_b_id in found]
            with rt.db.factory() as session:  # each pair's most cost held before it is sent
                fit, reserved = judge_spend.reserve(session, run_id, [
                    pairwise_runs.pair_bound(scorer, judges, found[p.output_a_id],
                                             found[p.output_b_id]) for p in batch])
            stopped = fit < len(batch)
            batch, tab = batch[:fit], ledger.Tab()
            try:
                outcomes = await asyncio.gather(*(judged(p, found, tab) for p in batch),
                                                return_exceptions=True)
                done = stops.uncut(batch, outcomes)  # a pair a cancel cut: a later job's
                batch = [p for p, _ in done]
                rows = [row for _, found_rows in done for row in found_rows]
                with rt.db.factory() as session:
                    pairwise_runs.write_comparisons(session, version_id, batch, rows)
                    judge_spend.charge(session, run_id, reserved, purpose, tab)
                    session.commit()
            except BaseException:  # what was sent is paid for: on the ledger, the rest back
                with rt.db.factory() as session:
                    judge_spend.charge(session, run_id, reserved, purpose, tab)
                    session.commit()
                raise
            progress["compared"] += len(batch)
            progress["comparisons"] += len(rows)
            if watch.stopped:
                progress["stopped"] = "cancelled"
            elif stopped:
                progress["stopped"] = "budget_exceeded"
            _publish(rt, run_id, progress)
            if stopped and not watch.stopped:
                log.warning("run %s: comparing stopped: the budget has no room for the "
                            "next pairs", run_id)
                break
        if watch.stopped and progress.get("stopped") != "cancelled":  # between batches
            progress["stopped"] = "cancelled"
            _publish(rt, run_id, progress)
    log.info("run %s: %s comparisons written", run_id, progress["comparisons"])
    return int(progress["comparisons"])


def _publish(rt: Runtime, run_id: int, progress: dict[str, Any]) -> None:
    try:  # progress is best effort; the comparisons are in the database
        rt.publish(run_id, COMPARED, dict(progress))
    except Exception as exc:
        log.warning("run %s: comparison progress not published: %s", run_id, exc)


async def judge_pair(scorer: PairwiseScorer, a: Subject, b: Subject,
                     ctx: Context) -> list[PairVerdict]:
    """The scorer's verdicts; one failed verdict per judge when it raises (a bug in the
    scorer must not lose the other pairs)."""
    try:
        return await scorer.compare(a, b, ctx)
    except Exception as exc:
        log.exception("pairwise scorer %s failed", scorer.kind)
        error = f"internal error in the {scorer.kind} scorer: {type(exc).__name__}: {exc}"
        return [PairVerdict(None, error=error, judge_model=j) for j in scorer.judges]
