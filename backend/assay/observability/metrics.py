"""Every Prometheus metric Assay exports, defined here and nowhere else.

Multiprocess mode: when PROMETHEUS_MULTIPROC_DIR is set (the `assay` command sets it,
`boot.multiproc_dir`), every process (gunicorn workers, RQ workers and their work horses, the
reaper) writes its samples to files there and `/metrics` in any API process adds them all
up. It must be set before prometheus_client is first imported, which is why nothing else
imports prometheus_client. Without it (tests, a bare `create_app`), one process's registry.

Files are named by host and pid (`process_id`), except a work horse's: RQ forks a new one
per job, and files per pid would add a few files to the directory with every job (and
every scrape reads them all). A worker runs one horse at a time, so its horses share files
named after the worker (`<host>-<worker pid>-horse`, see `become_work_horse`): each horse
opens them, reads the values its predecessors left and adds to them. The directory then
holds a few files per long-lived process, not per job.

Queue depth and live workers are read from Redis when scraped (`render`), not recorded.
Labels are bounded: routes are URL rules, not paths; providers are adapter kinds; models
are the ones an operator configured; error classes are the client's fixed taxonomy.
"""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prometheus_client import (
    REGISTRY as DEFAULT_REGISTRY,
)
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client import values as _values
from prometheus_client.core import GaugeMetricFamily, Metric

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
ENABLED = os.environ.get("ASSAY_METRICS", "1") != "0"  # off: nothing is recorded


_HOST = socket.gethostname().replace("_", "-")
# In a work horse: (its pid, its worker's pid). The pid is kept so that a process the
# horse forks in turn (it would inherit this) names files of its own, not the horse's.
_horse: tuple[int, int] | None = None


def process_id(pid: int | None = None) -> str:
    """Names this process's sample files: the host too, because containers that share the
    directory (compose's API and workers) each count pids from 1. prometheus_client calls it
    on every sample recorded and re-opens the files when the name changes (after a fork)."""
    if pid is None:
        pid = os.getpid()
        if _horse is not None and _horse[0] == pid:
            return f"{_HOST}-{_horse[1]}-horse"
    return f"{_HOST}-{pid}"


def become_work_horse(worker_pid: int) -> None:
    """Called first thing in a freshly forked work horse: its samples go to the files every
    horse of worker `worker_pid` shares. Safe because the worker waits for one horse to
    exit (or kills it and waits) before forking the next, so no two write them at once;
    the values are in the files, so counters carry on from where the last horse left
    them."""
    global _horse
    _horse = (os.getpid(), worker_pid)


if os.environ.get(MULTIPROC_ENV):  # before any metric exists: they take the class then
    _values.ValueClass = _values.MultiProcessValue(process_id)

HTTP_LATENCY = Histogram(
    "assay_http_request_duration_seconds", "API request latency until the response is "
    "returned (a stream's body is not included)", ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
PROVIDER_CALLS = Counter(
    "assay_provider_calls_total", "LLM calls made (retries included in one call), by outcome",
    ["provider", "outcome"])
PROVIDER_LATENCY = Histogram(
    "assay_provider_request_duration_seconds", "Latency of one attempt of an LLM call",
    ["provider"], buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
PROVIDER_ERRORS = Counter(
    "assay_provider_errors_total", "Failed attempts of LLM calls, by error class",
    ["provider", "error_class"])
PROVIDER_RETRIES = Counter(
    "assay_provider_retries_total", "Attempts retried after a transient error",
    ["provider", "error_class"])
CELLS = Counter(
    "assay_run_cells_total", "Run cells finished, by outcome (ok, error, cached)",
    ["outcome"])
CACHE_HITS = Counter(
    "assay_cache_hits_total", "Run cells answered from the response cache (no provider call)")
SPEND = Counter(
    "assay_spend_dollars_total", "What run cells' provider calls cost, in US dollars",
    ["provider", "model"])
LEASES_RECLAIMED = Counter(
    "assay_leases_reclaimed_total", "Runs re-enqueued by the reaper because a shard stopped "
    "renewing its leases (a dead worker) or no shard ever took them")
JOBS = Counter(
    "assay_jobs_total", "RQ jobs finished, by function and status", ["job", "status"])
JOB_DURATION = Histogram(
    "assay_job_duration_seconds", "RQ job duration", ["job"],
    buckets=(0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600))
# The database pools of live processes (a dead one's are dropped, mark_process_dead),
# summed; `pool` is the engine: main, or autocommit (PostgreSQL's statements alone).
POOL_CHECKED_OUT = Gauge(
    "assay_db_pool_checked_out", "Database connections in use (checked out of the pool)",
    ["pool"], multiprocess_mode="livesum")
POOL_OVERFLOW = Gauge(
    "assay_db_pool_overflow", "Connections in use beyond the pools' size (their overflow)",
    ["pool"], multiprocess_mode="livesum")
POOL_SIZE = Gauge(
    "assay_db_pool_size", "Connections the pools keep", ["pool"], multiprocess_mode="livesum")
POOL_TIMEOUTS = Counter(
    "assay_db_pool_timeouts_total", "Waits for a connection that timed out "
    "(ASSAY_DB_POOL_TIMEOUT_S; the request got 503)")


def observe_pool(engine: Any, name: str) -> None:
    """Keep the pool gauges of `engine` current as connections leave and come back. Counted
    here, under a lock: SQLAlchemy's checkin event fires before the pool takes the
    connection back, so reading the pool's own figures then would be one off."""
    import threading

    from sqlalchemy import event
    from sqlalchemy.pool import QueuePool

    pool = engine.pool
    if not isinstance(pool, QueuePool):
        return  # SQLite in memory: one connection per thread, nothing to run out of
    size = pool.size()
    checked_out, overflow = _child(POOL_CHECKED_OUT, name), _child(POOL_OVERFLOW, name)
    _child(POOL_SIZE, name).set(size)
    lock, out = threading.Lock(), [0]

    def moved(by: int) -> None:
        with lock:
            out[0] += by
            if ENABLED:  # not inside unrecorded(): a local eval's checkouts
                checked_out.set(out[0])
                overflow.set(max(0, out[0] - size))

    def forked() -> None:  # the child's pool starts empty (db.py disposes it)
        nonlocal lock
        lock, out[0] = threading.Lock(), 0

    os.register_at_fork(after_in_child=forked)
    event.listen(engine, "checkout", lambda *_: moved(1))
    event.listen(engine, "checkin", lambda *_: moved(-1))


def record_pool_timeout() -> None:
    if ENABLED:
        POOL_TIMEOUTS.inc()


@contextmanager
def unrecorded() -> Iterator[None]:
    """Record nothing inside: a local `assay eval` runs where no /metrics will read it
    (recording took 3% of its CPU per call, measured with py-spy)."""
    global ENABLED
    was, ENABLED = ENABLED, False
    try:
        yield
    finally:
        ENABLED = was


def mark_process_dead(pid: int) -> None:
    """gunicorn's child_exit hook: drop the dead worker's live gauges (counters stay)."""
    if os.environ.get(MULTIPROC_ENV):
        multiprocess.mark_process_dead(process_id(pid))


def horse_gone(worker_pid: int) -> None:
    """In the worker, once its work horse has exited, however it ended (its job done, an
    exception, killed by a stop, a timeout or the kernel): drop the live gauges of the
    files its horses share. A dead horse holds no connection (the kernel closed them), but
    its last values would otherwise stay in the sum until the next horse touched the
    database: a horse killed mid-query left the pool gauge at 1-2 for good."""
    if os.environ.get(MULTIPROC_ENV):
        multiprocess.mark_process_dead(f"{_HOST}-{worker_pid}-horse")


def at_exit() -> None:
    """At a process's normal exit (one-shot commands: `assay seed`, `db upgrade`...): its
    live gauges go with it. Work horses leave by os._exit (horse_gone), gunicorn's workers
    by its child_exit hook."""
    if os.environ.get(MULTIPROC_ENV) and _horse is None:
        multiprocess.mark_process_dead(process_id())


@functools.lru_cache(maxsize=4096)
def _child(metric: Any, *labels: str) -> Any:
    """`metric.labels(*labels)`, remembered: labels() validates and locks on every call,
    which was half the cost of recording a call (measured: 20 -> 11 us per LLM call in
    multiprocess mode). Label values are bounded (see above), so the cache is too."""
    return metric.labels(*labels)


def record_attempt(provider: str, seconds: float | None, error_class: str | None) -> None:
    """One attempt of an LLM call: its latency (None: it never reached the provider)."""
    if not ENABLED:
        return
    if seconds is not None:
        _child(PROVIDER_LATENCY, provider).observe(seconds)
    if error_class is not None:
        _child(PROVIDER_ERRORS, provider, error_class).inc()


def record_retry(provider: str, error_class: str) -> None:
    if ENABLED:
        _child(PROVIDER_RETRIES, provider, error_class).inc()


def record_call(provider: str, error_class: str | None) -> None:
    if ENABLED:
        _child(PROVIDER_CALLS, provider, "ok" if error_class is None else "error").inc()


def record_cell(provider: str | None, model: str | None, ok: bool, cached: bool,
                cost_micros: int | None) -> None:
    if not ENABLED:
        return
    _child(CELLS, "cached" if cached else "ok" if ok else "error").inc()
    if cached:
        CACHE_HITS.inc()
    if cost_micros:
        _child(SPEND, provider or "", model or "").inc(cost_micros / 1_000_000)


def record_reclaimed(runs: int) -> None:
    if ENABLED:
        LEASES_RECLAIMED.inc(runs)


def record_job(job: str, status: str, seconds: float) -> None:
    if not ENABLED:
        return
    JOBS.labels(job, status).inc()
    JOB_DURATION.labels(job).observe(seconds)


class QueueCollector:
    """Queue depth and live workers, read from Redis at scrape time."""

    def __init__(self, redis: Any, queue_name: str) -> None:
        self.redis = redis
        self.queue_name = queue_name

    def collect(self) -> Iterator[Metric]:
        from rq import Queue, Worker
        from rq.registry import StartedJobRegistry

        depth = GaugeMetricFamily("assay_queue_depth", "Jobs waiting in the queue",
                                  labels=["queue"])
        running = GaugeMetricFamily("assay_queue_running", "Jobs being worked on",
                                    labels=["queue"])
        workers = GaugeMetricFamily("assay_workers", "RQ workers with a live heartbeat",
                                    labels=["queue"])
        up = GaugeMetricFamily("assay_redis_up", "Redis answered the scrape")
        try:
            queue = Queue(self.queue_name, connection=self.redis)
            depth.add_metric([self.queue_name], queue.count)
            running.add_metric([self.queue_name],
                               StartedJobRegistry(queue=queue).count)
            workers.add_metric([self.queue_name], Worker.count(queue=queue))
            up.add_metric([], 1)
        except Exception:  # a scrape reports Redis down instead of failing
            up.add_metric([], 0)
        yield from (depth, running, workers, up)


def render(redis: Any, queue_name: str) -> bytes:
    """The exposition text: every process's samples plus the queue gauges."""
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = DEFAULT_REGISTRY
    scraped = CollectorRegistry()
    scraped.register(QueueCollector(redis, queue_name))
    return generate_latest(registry) + generate_latest(scraped)
