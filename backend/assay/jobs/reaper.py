"""The reaper: runs that nobody is working on get a shard runner again.

A run in `running` needs a shard when some of its cells are leased to a shard that stopped
renewing (lease expired: the worker died), or when it has pending cells and no live lease
at all (its jobs were lost, e.g. with a Redis restart); so does a run still `pending` a
lease after its creation. One query answers for every such run, with index lookups on
ix_outputs_claim (run_id, status, lease_until). Each run
gets at most one shard per ASSAY_LEASE_S from the reaper (a Redis SET NX EX key), so a
backed-up queue is not flooded. A running run with no open cell left is closed.

Every `assay worker` starts the reaper as a child process (`assay reaper`, in the worker's
process group, and told by the kernel to exit with its parent), which reaps at start and
then every ASSAY_REAPER_INTERVAL_S; a Redis lock (SET NX PX) lets one reaper act per
interval. A process, not a thread of the worker: RQ forks a work horse per job, and a fork
taken while a thread holds a lock (SQLAlchemy's mapper configuration, a connection pool)
leaves the work horse waiting on that lock forever.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import signal
import subprocess
import sys
import threading
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, exists, or_, select
from sqlalchemy.orm import Session

from assay.core.base import utcnow
from assay.core.experiments import spend
from assay.core.runs import judge_spend, service
from assay.core.runs.models import STOPPED, CellStatus, Output, Run, RunStatus
from assay.db import Database
from assay.events.publish import FINISHED
from assay.jobs import experiments as experiment_jobs
from assay.jobs import retention
from assay.jobs.queues import enqueue_run, enqueue_warm
from assay.jobs.runs import publish
from assay.observability import metrics
from assay.runtime import Runtime
from assay.settings import Settings

log = logging.getLogger(__name__)


def _key(rt: Runtime, *parts: object) -> str:
    return ":".join([rt.settings.redis_prefix, "reaper", *map(str, parts)])


def abandoned(session: Session, lease_s: int) -> list[tuple[int, bool, bool, bool]]:
    """(run id, has pending cells, has expired leases, has live leases) of every running
    run, and of every run still pending a lease after it was created (its jobs may have
    been lost before any worker took one): one query, three index lookups per run."""
    now = utcnow()
    running = CellStatus.running.value

    def any_cell(*where: Any) -> Any:
        return exists().where(Output.run_id == Run.id, *where)

    rows = session.execute(
        select(Run.id,
               any_cell(Output.status == CellStatus.pending.value),
               any_cell(and_(Output.status == running, Output.lease_until < now)),
               any_cell(and_(Output.status == running, Output.lease_until >= now)))
        .where(or_(Run.status == RunStatus.running,
                   and_(Run.status == RunStatus.pending,
                        Run.created_at < now - timedelta(seconds=lease_s))))
        .order_by(Run.id)).all()
    return [(run_id, bool(p), bool(e), bool(live)) for run_id, p, e, live in rows]


def release_stopped(session: Session) -> dict[int, int]:
    """Cells of cancelled or out-of-budget runs whose worker died holding them: skipped, and
    their reservations released (nothing would ever claim them again). Run id -> cells."""
    runs = session.execute(select(Run.id, Run.status, Run.error).where(
        Run.status.in_(STOPPED), exists().where(
            Output.run_id == Run.id, Output.status == CellStatus.running,
            Output.lease_until < utcnow())).order_by(Run.id)).all()
    released = {}
    for run_id, status, error in runs:
        released[run_id] = service.skip_expired_cells(session, run_id, status,
                                                      error or f"The run was {status}")
        session.commit()
    return released


def reap(rt: Runtime) -> list[int]:
    """One pass; returns the runs a shard was enqueued for."""
    with rt.db.factory() as session:
        released = release_stopped(session)
        scoring = judge_spend.release_expired(session)  # held by dead scoring jobs
        holds = spend.release_expired(session)  # by dead generation jobs, trials...
        rows = abandoned(session, rt.settings.lease_s)
        session.commit()
    if released:
        log.info("reaper skipped dead workers' cells of stopped runs %s", released)
    if scoring:
        log.info("reaper released what dead scoring jobs held on runs %s", scoring)
    if holds:
        log.warning("reaper released budget holds past their lease (their owner died), "
                    "project -> micro-dollars: %s", holds)
    with rt.db.factory() as session:
        wanted, closed = [], []
        for run_id, pending, expired, live in rows:
            if expired or (pending and not live):
                wanted.append(run_id)
            elif not (pending or live):  # no open cell: the last shard died before closing
                run = service.finish_if_done(session, run_id)
                if run is not None:
                    closed.append(run_id)
    for run_id in closed:
        publish(rt, run_id, FINISHED)
        enqueue_warm(rt, run_id)
        log.info("reaper closed run %s", run_id)
    try:  # iterations whose run ended unnoticed, or whose step's job died
        experiment_jobs.stale(rt)
    except Exception as exc:
        log.warning("reaper: experiment steps not checked: %s", exc)
    enqueued = []
    ttl = max(1, rt.settings.lease_s)
    for run_id in wanted:
        if rt.redis.set(_key(rt, "run", run_id), "1", nx=True, ex=ttl):
            enqueue_run(rt, run_id, shards=1)
            enqueued.append(run_id)
    if enqueued:
        metrics.record_reclaimed(len(enqueued))
        log.info("reaper enqueued a shard for runs %s", enqueued)
    return enqueued


def own_runtime(settings: Settings) -> Runtime:
    """The reaper's runtime: its own engine and Redis connection."""
    database = Database()
    database.configure(settings)
    return Runtime(settings=settings, db=database)


def reaper_loop(settings: Settings, stop: threading.Event) -> None:
    """Reap now, then every interval, while holding the one-per-interval lock; errors of
    Redis or the database are logged and the next interval tries again."""
    interval = settings.reaper_interval_s
    me = uuid.uuid4().hex
    rt: Runtime | None = None
    while not stop.is_set():
        try:
            if rt is None:
                rt = own_runtime(settings)
            lock = _key(rt, "lock")
            if rt.redis.set(lock, me, nx=True, px=max(100, int(interval * 1000) - 50)):
                reap(rt)
                retention.schedule(rt)  # once per retention interval, over every reaper
        except Exception:  # whatever failed (Redis, the database), the next pass retries
            log.exception("reaper pass failed; retrying in %ss", interval)
        stop.wait(interval)


def run_reaper(settings: Settings) -> None:
    """The `assay reaper` process: reap until SIGTERM or SIGINT."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    reaper_loop(settings, stop)


def _exit_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the kernel sends SIGTERM to this child when the worker that started it dies,
    even by SIGKILL; elsewhere the child outlives it (harmless: reaping is idempotent)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


PR_SET_PDEATHSIG = 1


def start_reaper(env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start `assay reaper` as a child of this worker process."""
    return subprocess.Popen([sys.executable, "-m", "assay", "reaper"], env=env,
                            preexec_fn=_exit_with_parent)  # the worker has no threads yet
