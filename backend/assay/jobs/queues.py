"""Enqueueing: jobs take ids, never objects."""

from __future__ import annotations

from rq import Queue

from assay.runtime import Runtime


def enqueue_run(rt: Runtime, run_id: int) -> None:
    Queue(rt.settings.runs_queue, connection=rt.redis).enqueue(
        "assay.jobs.runs.execute_run", run_id, job_timeout=6 * 3600, result_ttl=600,
        failure_ttl=7 * 86400,
    )
