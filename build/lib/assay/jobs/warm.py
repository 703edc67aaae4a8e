"""RQ entry point: fill what a stopped run's readers keep (core/runs/warm.py), enqueued
when the run stops and when its scores change (queues.enqueue_warm)."""

from __future__ import annotations

import logging

from assay.core.runs import warm
from assay.jobs.queues import warm_key
from assay.runtime import current, share_intervals

log = logging.getLogger(__name__)


def warm_run(run_id: int) -> bool:
    """True when the run's entries were filled. A failure is logged, never raised: the run
    is not touched, and its readers compute on a miss what was not kept."""
    rt = share_intervals(current())  # the leaderboard's, drawn here for the API
    try:
        rt.redis.delete(warm_key(rt, run_id))  # a change from now on enqueues another
        with rt.db.factory() as session:
            done = warm.warm(session, run_id)
            session.commit()
    except Exception:
        log.exception("run %s: its reads were not kept ahead (they are computed when read)",
                      run_id)
        return False
    try:  # apart: what was kept above stays kept
        with rt.db.factory() as session:
            warm.warm_leaderboards(session, run_id)
    except Exception:
        log.exception("run %s: the leaderboard's intervals were not drawn ahead", run_id)
    return done
