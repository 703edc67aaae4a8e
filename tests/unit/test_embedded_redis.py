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



def test_the_embedded_server_stops_with_the_process_that_started_it(tmp_path: Path) -> None:
    """A one-shot command (`assay seed`, `assay retention`) still holds pooled connections
    when it exits; the server it started must not outlive it."""
    import os
    import subprocess
    import sys

    import redis

    code = ("from assay.redis_conn import connect; from assay.settings import Settings; "
            "c = connect(Settings.from_env()); c.ping(); c.set('k', 'v'); "
            "print(c.connection_pool.connection_kwargs['path'])")
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["ASSAY_INSTANCE_PATH"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True, timeout=60)
    socket = done.stdout.strip()
    try:
        alive = redis.Redis(unix_socket_path=socket, socket_timeout=1).ping()
    except (redis.ConnectionError, FileNotFoundError):
        alive = False
    assert not alive, f"the embedded Redis on {socket} outlived the process that started it"


def test_a_throwaway_instance_discards_its_server_at_once(tmp_path: Path) -> None:
    """`assay eval` starts one only for a provider's rpm/tpm buckets and drops it after the
    run: killed, its folder gone, and the exit hook leaves it alone (its pid is free)."""
    import os

    import redis

    from assay import redis_conn

    settings = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)})
    conn = connect(settings)
    socket = conn.connection_pool.connection_kwargs["path"]
    server = redis_conn._embedded[str(tmp_path)]
    redis_conn.discard_embedded(settings)
    assert str(tmp_path) not in redis_conn._embedded
    try:
        alive = redis.Redis(unix_socket_path=socket, socket_timeout=1).ping()
    except (redis.ConnectionError, FileNotFoundError):
        alive = False
    assert not alive
    redis_conn._stop(server, os.getpid())  # a no-op now: nothing to stop
    redis_conn.discard_embedded(settings)  # and discarding twice is harmless
