"""Long-running processes: the API under gunicorn, and RQ workers."""

from __future__ import annotations

import os
from typing import Any

from gunicorn.app.base import BaseApplication

from assay.balanced_worker import SLOTS, BalancedThreadWorker, Shares, pre_fork, release
from assay.redis_conn import connect, embedded_url
from assay.server_errors import install as json_server_errors
from assay.settings import Settings


class _Gunicorn(BaseApplication):
    def __init__(self, options: dict[str, Any], admit: int):
        self.options = options
        self.admit = admit
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from assay.admission import Admission
        from assay.api import slow_lane
        from assay.api.kept_reads import hear_other_processes
        from assay.app import create_app

        app = create_app()  # in the worker (no preload): the listener's thread lives there
        hear_other_processes(app)
        return Admission(app, self.admit, app.config["MAX_CONTENT_LENGTH"],
                         aside=slow_lane.of(app).is_slow)


def share_embedded_redis(settings: Settings) -> Settings:
    """Put the embedded Redis's URL in the environment so child processes use the same one."""
    if settings.redis_url:
        return settings
    os.environ["REDIS_URL"] = embedded_url(settings)
    return Settings.from_env()


def run_gunicorn(host: str, port: int, threads: int, workers: int | None = None,
                 admit: int = 4) -> None:
    """gthread workers, one per core unless told: Python holds one core per process (the
    GIL), and threads keep progress streams open cheaply. Each worker's database pool holds
    as many connections as it has threads, so no request waits for, or opens, one. A worker
    holds at most twice its threads in client connections: keep-alive clients otherwise
    pile onto whichever process accepted first, and it alone works while the others idle
    (measured: 50 keep-alive clients on 2 workers used 1.0 core of 2, capped 1.7). Of its
    threads, `admit` at most work on a request at once, the others wait in order
    (admission.py). Slow work (model calls, tests, downloads) gets ASSAY_WEB_SLOW threads
    on top, and places of its own (api/slow_lane.py): it never takes the reads' threads."""
    settings = share_embedded_redis(Settings.from_env())
    if settings.is_sqlite:
        workers = 1  # one writer: more processes would only queue on the file's lock
    reads, threads = threads, threads + settings.slow_places
    os.environ.setdefault("ASSAY_DB_POOL_SIZE", str(threads))
    os.environ.setdefault("ASSAY_DB_PING_IDLE_S", "1")  # db.py: a round trip per read saved
    BalancedThreadWorker.shares = Shares(SLOTS)
    json_server_errors()  # gunicorn's 400/414/431 pages in the API's Error shape
    _Gunicorn({
        "bind": f"{host}:{port}", "workers": workers or os.cpu_count() or 1,
        "worker_class": BalancedThreadWorker, "threads": threads,
        "worker_connections": 2 * reads + settings.slow_places,
        "timeout": 0,  # progress streams stay open; gthread still reaps dead clients
        "graceful_timeout": 5, "accesslog": None, "errorlog": "-", "loglevel": "warning",
        "pre_fork": pre_fork, "child_exit": _child_exit, "post_worker_init": _post_worker_init,
    }, admit).run()


def _post_worker_init(_worker: Any) -> None:
    """The collector's pauses were the slowest reads' (p99 230-280 ms -> 160-170 under the
    bench's mixed load): a full collection walks every object the app imported."""
    from assay.collections_policy import for_a_server

    for_a_server()  # the app is loaded: what is there now stays


def _child_exit(_server: Any, worker: Any) -> None:
    from assay.observability.metrics import mark_process_dead

    release(worker)
    mark_process_dead(worker.pid)


def run_worker(burst: bool) -> None:
    from rq import Queue

    from assay.jobs.reaper import start_reaper
    from assay.observability.jobs import ObservedWorker

    settings = share_embedded_redis(Settings.from_env())
    # A burst worker drains the queue and exits: nothing for a reaper to watch over.
    reaper = None if burst else start_reaper()
    conn = connect(settings)
    queue = Queue(settings.runs_queue, connection=conn)
    try:
        ObservedWorker([queue], connection=conn).work(burst=burst, logging_level="WARNING")
    finally:
        if reaper is not None:
            reaper.terminate()
            reaper.wait(10)
