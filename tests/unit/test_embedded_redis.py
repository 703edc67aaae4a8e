"""With no REDIS_URL, Assay runs a real embedded Redis that RQ and Streams work on."""

from __future__ import annotations

from pathlib import Path

from rq import Queue, SimpleWorker

from assay.redis_conn import connect
from assay.settings import Settings


def add(a: int, b: int) -> int:
    return a + b


def test_embedded_redis_serves_rq_and_streams(tmp_path: Path) -> None:
    settings = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)})
    conn = connect(settings)
    assert conn.ping()
    assert conn.connection_pool.connection_kwargs["path"].endswith("redis.socket")
    conn.xadd("s", {"a": "1"})
    assert conn.xlen("s") == 1
    queue = Queue("embedded-test", connection=conn)
    job = queue.enqueue(add, 2, 3)
    SimpleWorker([queue], connection=conn).work(burst=True)
    job.refresh()
    assert job.return_value() == 5
    assert connect(settings).ping()  # a second connection reaches the same server
