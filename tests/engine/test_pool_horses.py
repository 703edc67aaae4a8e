"""Database connections across forks: RQ's work horses and the pool gauge (issue 31).

`assay worker` builds the app, and with it the engine, before it forks a work horse per
job; each horse must start with an empty pool of its own, and the pool gauge that
/metrics sums over processes must come back to 0 once a horse has exited, however it
ended (PostgreSQL soaks ended with `<host>-<worker>-horse main: 2` checked out)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from flask import Flask
from prometheus_client.mmap_dict import MmapedDict
from rq import Queue, Worker
from rq.job import Job, JobStatus
from sqlalchemy import text

from assay.extensions import db
from tests.conftest import REDIS_URL

POOL_METRIC = "assay_db_pool_checked_out"


def test_a_forked_child_starts_with_an_empty_pool_and_leaves_the_parents_alone(
        app: Flask) -> None:
    engine = db.engine
    kept = engine.connect()  # the parent's, checked out across the fork
    kept.execute(text("SELECT 1"))
    kept.commit()
    idle = engine.connect()  # and one idle in the pool
    idle.execute(text("SELECT 1"))
    idle.close()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, use a connection of its own, leave as a horse does
        try:
            seen = {"checked_out": engine.pool.checkedout(),
                    "idle": engine.pool.checkedin()}  # type: ignore[attr-defined]
            with engine.connect() as own:
                seen["query"] = own.execute(text("SELECT 2")).scalar_one()
            os.write(writer, json.dumps(seen).encode())
        finally:
            os._exit(0)
    os.close(writer)
    os.waitpid(pid, 0)
    with os.fdopen(reader) as handle:
        seen = json.loads(handle.read())
    assert seen == {"checked_out": 0, "idle": 0, "query": 2}
    # the parent's connections were not closed (nor used) by the child
    assert kept.execute(text("SELECT 3")).scalar_one() == 3
    kept.close()
    with engine.connect() as again:
        assert again.execute(text("SELECT 4")).scalar_one() == 4


@pytest.fixture(scope="module")
def metrics_worker(test_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory,
                   app: Flask) -> Iterator[tuple[Queue, Path]]:
    """An `assay worker` of its own (its own queue: no other worker takes these jobs)
    writing its metrics where the test reads them."""
    metrics_dir = tmp_path_factory.mktemp("metrics")
    prefix = f"assay-test-pool-{uuid.uuid4().hex[:6]}"
    env = {**os.environ, **test_env, "ASSAY_REDIS_PREFIX": prefix,
           "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "assay", "worker"], env=env)
    conn = redis.Redis.from_url(REDIS_URL)
    queue = Queue(f"{prefix}-runs", connection=conn)
    deadline = time.monotonic() + float(os.environ.get("ASSAY_TEST_WORKER_START_S", 30))
    try:
        while not Worker.all(queue=queue):
            assert proc.poll() is None, "worker exited at start"
            assert time.monotonic() < deadline, "worker did not register"
            time.sleep(0.1)
        yield queue, metrics_dir
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        for key in conn.scan_iter(f"{prefix}:*"):
            conn.delete(key)


def _checked_out(metrics_dir: Path) -> dict[str, float]:
    found: dict[str, float] = {}
    for path in metrics_dir.glob("gauge_livesum_*.db"):
        for key, value, *_ in MmapedDict.read_all_values_from_file(str(path)):
            if json.loads(key)[0] == POOL_METRIC and value:
                found[path.stem] = value
    return found


def _ended(queue: Queue, job: Job, timeout_s: float = 30) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = job.get_status(refresh=True)
        if status in (JobStatus.FINISHED, JobStatus.FAILED):
            time.sleep(0.3)  # the worker's bookkeeping after the horse's exit
            return str(getattr(status, "value", status))
        time.sleep(0.05)
    raise AssertionError("the job did not end")


@pytest.mark.parametrize("job", ["die_holding_connections", "end_holding_connections"])
def test_the_pool_gauge_is_back_to_zero_once_a_horse_has_exited(
        metrics_worker: tuple[Queue, Path], job: str) -> None:
    queue, metrics_dir = metrics_worker
    enqueued = queue.enqueue(f"tests.engine.pool_jobs.{job}", 2)
    status = _ended(queue, enqueued)
    assert status == ("failed" if job.startswith("die") else "finished")
    assert _checked_out(metrics_dir) == {}
