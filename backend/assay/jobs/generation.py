"""RQ entry point of a generation job: its batches through the LLM client, progress
published as each batch comes back, the preview stored when all are in."""

from __future__ import annotations

import asyncio
import logging

from rq import Queue

from assay.core.generation import service, spend, store
from assay.core.generation.service import BatchResult, Call
from assay.events.publish import publish
from assay.jobs import stops
from assay.observability import logs
from assay.providers.client import LLMClient
from assay.runtime import Runtime, current

log = logging.getLogger(__name__)
STARTED, PROGRESS, FINISHED = "generation.started", "generation.progress", "generation.finished"
CALL_TIMEOUT_S = 300.0  # a batch writes thousands of tokens


def enqueue_generation(rt: Runtime, job_id: int) -> None:
    Queue(rt.settings.runs_queue, connection=rt.redis).enqueue(
        "assay.jobs.generation.execute_generation", job_id,
        job_timeout=spend.JOB_TIMEOUT_S, result_ttl=600,
        failure_ttl=7 * 86400, meta=logs.job_meta())


def cancel_generation(rt: Runtime, job_id: int) -> None:
    """Ask the job's worker to stop (a job that has ended is left as it is)."""
    stops.request(rt, stops.GENERATION, job_id)


def execute_generation(job_id: int) -> None:
    asyncio.run(run_job(current(), job_id))


async def run_job(rt: Runtime, job_id: int) -> None:
    conn, prefix = rt.redis, rt.settings.redis_prefix
    state = store.load(conn, prefix, job_id)
    if state is None or state["status"] != store.QUEUED:
        return  # expired, or another worker has it
    events = store.events_key(prefix, job_id)

    def emit(kind: str) -> None:
        store.save(conn, prefix, state)
        publish(conn, events, kind, service.progress(state), rt.settings.stream_maxlen)

    state["status"] = store.RUNNING
    emit(STARTED)
    call: Call | None = None
    held: spend.holds.Hold | None = None
    watch: stops.Watch | None = None
    results: list[BatchResult] = []
    failure: str | None = None
    try:
        with rt.db.factory() as session:
            call = service.prepare(session, rt.settings.secret_key, state)
            held = spend.hold(session, state, call)  # over the cap: nothing is sent

        def on_result(result: BatchResult) -> None:
            service.apply_result(state, result)
            emit(PROGRESS)

        client = LLMClient(timeout_s=CALL_TIMEOUT_S, url_policy=rt.settings.url_policy)
        # a cancel closes the batches' requests in flight: the batches done are kept
        async with client, stops.watching(stops.signal(
                rt, stops.GENERATION, job_id, after=stops.enqueued_at()), client.stop) as watch:
            results = await service.run_batches(client, call, on_result)
    except Exception as exc:  # the job must end with a truthful state, never hang queued
        log.exception("generation %s failed", job_id)
        failure = service.failure_text(exc)
    service.conclude(state, [b.count for b in call.batches] if call else [], results, failure)
    if watch is not None and watch.stopped and failure is None:
        service.cancelled(state)
    try:  # before "finished": the cost report has it when the client hears the job is done
        with rt.db.factory() as session:
            spend.record(session, state, held)
            session.commit()
    except Exception:
        log.exception("generation %s: its spend was not recorded", job_id)
    emit(FINISHED)
