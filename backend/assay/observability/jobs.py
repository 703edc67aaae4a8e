"""The RQ worker's side: each job runs inside its log context (the ids the enqueueing
request put in its meta) and is counted and timed in the metrics."""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from rq import Queue, SimpleWorker, Worker
from rq.job import Job

from assay.observability import logs, metrics, tracing

log = logging.getLogger(__name__)


class ObservedJobs:
    """Mixin for an RQ worker class; perform_job runs in the process that runs the job
    (the work horse of a forking worker)."""

    def perform_job(self, job: Job, queue: Queue, *args: Any, **kwargs: Any) -> bool:
        started = time.perf_counter()
        ok = False
        name = (job.func_name or "").rpartition(".")[2] or "unknown"
        try:
            with logs.job_context(job.meta), tracing.job_span(name, job.meta.get("trace")):
                ok = bool(super().perform_job(job, queue, *args, **kwargs))  # type: ignore[misc]
            return ok
        finally:
            metrics.record_job(name, "finished" if ok else "failed",
                               time.perf_counter() - started)
            _check_released(name)


class ObservedWorker(ObservedJobs, Worker):
    """`assay worker`'s class: forks a work horse per job, like RQ's Worker."""

    def main_work_horse(self, job: Job, queue: Queue) -> None:
        # In the horse, right after the fork: the worker is its parent. Its samples go to
        # the files of this worker's horses, not to new ones per job (metrics.py).
        metrics.become_work_horse(os.getppid())
        super().main_work_horse(job, queue)


    def monitor_work_horse(self, job: Job, queue: Queue, *args: Any, **kwargs: Any) -> None:
        try:
            super().monitor_work_horse(job, queue, *args, **kwargs)
        finally:  # the horse has exited, whatever way: it holds nothing any more
            metrics.horse_gone(os.getpid())


def _check_released(job: str) -> None:
    """Every job gives its database connections back before it ends (a SimpleWorker runs
    the next job in the same process); one that did not is named in the log."""
    from assay.runtime import _current

    held = _current.db.checked_out() if _current is not None else 0
    if held:
        log.warning("job %s ended with %s database connections checked out", job, held)


class ObservedSimpleWorker(ObservedJobs, SimpleWorker):
    """Runs jobs in its own process (tests, the embedded stack's burst runs)."""

