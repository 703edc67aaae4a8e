"""A real RQ worker process and a real HTTP server around the app, for end-to-end engine tests."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
import redis
from flask import Flask
from rq import Queue, Worker
from werkzeug.serving import make_server

from assay.settings import Settings


@pytest.fixture(scope="session")
def worker(app: Flask, test_env: dict[str, str],
           settings: Settings) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-m", "assay", "worker"],
                            env={**os.environ, **test_env})
    conn = redis.Redis.from_url(test_env["REDIS_URL"])
    queue = Queue(settings.runs_queue, connection=conn)
    # a loaded machine (several suites at once) can take longer to start one
    deadline = time.monotonic() + float(os.environ.get("ASSAY_TEST_WORKER_START_S", 30))
    while not Worker.all(queue=queue):
        assert proc.poll() is None, "worker exited at start"
        assert time.monotonic() < deadline, "worker did not register"
        time.sleep(0.1)
    yield proc
    proc.terminate()
    proc.wait(timeout=15)


@pytest.fixture(scope="session")
def live_url(app: Flask) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
