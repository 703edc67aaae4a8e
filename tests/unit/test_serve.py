"""`assay serve`'s gunicorn shape: one gthread process per core unless told, a database
connection per thread, and at most twice its threads in client connections per process, so
keep-alive clients spread over the processes (README, Deploying: the API's worker model)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from assay import serve


def test_each_process_takes_at_most_twice_its_threads_in_connections(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    class Recorder:
        def __init__(self, options: dict[str, Any], admit: int):
            seen.update(options, admit=admit)

        def run(self) -> None:
            pass

    monkeypatch.setattr(serve, "_Gunicorn", Recorder)
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.delenv("ASSAY_DB_POOL_SIZE", raising=False)
    monkeypatch.delenv("ASSAY_DB_PING_IDLE_S", raising=False)
    serve.run_gunicorn("127.0.0.1", 8000, threads=16, workers=2)
    assert (seen["worker_class"], seen["workers"], seen["threads"]) == ("gthread", 2, 16)
    assert seen["worker_connections"] == 32
    assert seen["admit"] == 4  # admission.py: the others wait in order
    assert seen["post_worker_init"] is serve._post_worker_init  # collections_policy
    assert os.environ["ASSAY_DB_POOL_SIZE"] == "16"
    assert os.environ["ASSAY_DB_PING_IDLE_S"] == "1"  # its processes ping idle connections
