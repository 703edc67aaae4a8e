"""RQ entry point: a shard runner that claims batches of a run's cells until none are left."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta

from assay.core.runs import service
from assay.core.runs.engine import execute_batch
from assay.events.publish import FINISHED, PROGRESS, STARTED
from assay.providers.client import LLMClient
from assay.runtime import Runtime, current

log = logging.getLogger(__name__)
LEASE = timedelta(minutes=5)


def execute_run(run_id: int) -> None:
    asyncio.run(_execute(current(), run_id))


async def _execute(rt: Runtime, run_id: int) -> None:
    owner = uuid.uuid4().hex
    batch = max(1, rt.settings.run_concurrency)
    client = LLMClient(max_connections=batch)
    try:
        with rt.db.factory() as session:
            if service.start_run(session, run_id):
                run = service.refresh_counts(session, run_id)
                rt.publish(run_id, STARTED, service.progress(run))
        while True:
            with rt.db.factory() as session:
                cells = service.claim_cells(session, run_id, owner, batch, LEASE)
            if not cells:
                break
            results = await execute_batch(client, cells)
            with rt.db.factory() as session:
                recorded = service.record_results(session, run_id, owner, results)
                if recorded is not None:
                    rt.publish(run_id, PROGRESS, service.progress(recorded))
        with rt.db.factory() as session:
            finished = service.finish_if_done(session, run_id)
            if finished is not None:
                rt.publish(run_id, FINISHED, service.progress(finished))
                log.info("run %s %s", run_id, finished.status)
    finally:
        await client.aclose()
