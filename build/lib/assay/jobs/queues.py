"""Enqueueing: jobs take ids, never objects."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from assay.core.runs.models import Run
from assay.observability import logs
from assay.runtime import Runtime

if TYPE_CHECKING:
    from rq import Queue

log = logging.getLogger(__name__)
MAX_SHARDS = 16
SCORING_TIMEOUT_S = 6 * 3600


def _queue(rt: Runtime) -> Queue:
    """The runs queue. RQ (and Redis with it) is imported here, not with this module: the
    run engine imports it, and `assay eval` runs the engine without Redis."""
    from rq import Queue

    return Queue(rt.settings.runs_queue, connection=rt.redis)


def scoring_keys(rt: Runtime, run_id: int) -> tuple[str, str]:
    """(the lock one scoring job of the run holds, the mark of a job enqueued not started)."""
    lock = f"{rt.settings.redis_prefix}:scoring:{run_id}"
    return lock, f"{lock}:pending"


def scoring_active(rt: Runtime, run_id: int) -> bool:
    """A scoring job of the run is queued or running (as far as Redis knows)."""
    return bool(rt.redis.exists(*scoring_keys(rt, run_id)))


def _run_facts(rt: Runtime, run_id: int) -> tuple[dict[str, Any], int | None]:
    """The run's settings and project, in one query."""
    with rt.db.factory() as session:
        row = session.execute(select(Run.settings, Run.project_id).where(Run.id == run_id)).first()
    return (row[0] or {}, row[1]) if row else ({}, None)


def _meta(rt: Runtime, run_id: int, project_id: int | None = None) -> dict[str, Any]:
    """The job's log context: the enqueueing request's ids (or job's), and the run's
    project, so that every line the job logs names the request, user, project and run."""
    project_id = logs.current().get("project_id") or project_id
    if project_id is None:
        project_id = _run_facts(rt, run_id)[1]
    return logs.job_meta(run_id=run_id, project_id=project_id)


def enqueue_run(rt: Runtime, run_id: int, shards: int | None = None) -> int:
    """Enqueue `shards` shard runners of the run (default: its `shards` setting, else
    ASSAY_RUN_SHARDS), so that several workers share it; each claims leased batches until
    nothing is left. Returns how many."""
    settings, project_id = _run_facts(rt, run_id)
    chosen = settings.get("shards") or rt.settings.run_shards
    count = max(1, min(MAX_SHARDS, int(chosen))) if shards is None else max(1, shards)
    queue = _queue(rt)
    meta = _meta(rt, run_id, project_id)
    queue.enqueue_many([
        queue.prepare_data("assay.jobs.runs.execute_run", (run_id,), timeout=6 * 3600,
                           result_ttl=600, failure_ttl=7 * 86400, meta=meta)
        for _ in range(count)])
    return count


def enqueue_scoring(rt: Runtime, run_id: int) -> None:
    """Score the run's recorded outputs that its scorers have not scored yet."""
    rt.redis.set(scoring_keys(rt, run_id)[1], 1, ex=SCORING_TIMEOUT_S)
    _queue(rt).enqueue(
        "assay.jobs.scoring.score_run", run_id, job_timeout=SCORING_TIMEOUT_S,
        result_ttl=600, failure_ttl=7 * 86400, meta=_meta(rt, run_id))


def enqueue_comparisons(rt: Runtime, run_id: int, scorer_version_id: int, target_a_id: int,
                        target_b_id: int, base_run_id: int | None = None) -> str:
    """Compare two targets of the run (B of `base_run_id` when given) with a pairwise
    scorer version; returns the job id."""
    job = _queue(rt).enqueue(
        "assay.jobs.comparisons.compare_targets", run_id, scorer_version_id, target_a_id,
        target_b_id, base_run_id, job_timeout=6 * 3600, result_ttl=600, failure_ttl=7 * 86400,
        meta=_meta(rt, run_id))
    return str(job.id)


WARM_TIMEOUT_S = 3600
WARM_PENDING_S = 600  # a lost enqueue blocks the next for at most this long


def warm_key(rt: Runtime, run_id: int) -> str:
    """The mark of a warm job of the run enqueued and not started (bursts coalesce)."""
    return f"{rt.settings.redis_prefix}:warm:{run_id}:pending"


def enqueue_warm(rt: Runtime, run_id: int) -> bool:
    """Fill what the run's readers keep (core/runs/warm.py), unless a warm job of the run
    is already waiting (it will read the newest state). Never raises: the readers compute
    what is missing, so a Redis outage only makes the next first read slower."""
    try:
        if not rt.redis.set(warm_key(rt, run_id), 1, nx=True, ex=WARM_PENDING_S):
            return False
        _queue(rt).enqueue(
            "assay.jobs.warm.warm_run", run_id, job_timeout=WARM_TIMEOUT_S, result_ttl=600,
            failure_ttl=7 * 86400, meta=_meta(rt, run_id))
        return True
    except Exception as exc:
        log.warning("run %s: its reads are not kept ahead: %s", run_id, exc)
        with contextlib.suppress(Exception):  # Redis away: the mark expires on its own
            rt.redis.delete(warm_key(rt, run_id))  # the next change may enqueue one
        return False
