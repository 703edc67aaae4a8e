"""The reaper: runs nobody works on get a shard again, in a real worker process; the reaper
loop survives Redis and database errors, and one worker reaps per interval."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from types import SimpleNamespace
from typing import Any, cast

import httpx
import pytest
import redis
from flask import Flask
from rq import Queue, Worker
from sqlalchemy import func, select, update
from sqlalchemy.exc import OperationalError

from assay.core import ledger
from assay.core.base import utcnow
from assay.core.experiments import spend
from assay.core.experiments.models import Experiment
from assay.core.generation import spend as generation_spend
from assay.core.ledger.models import BudgetHold
from assay.core.projects.models import Project
from assay.core.runs import judge_spend
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget
from assay.core.runs.service import Cell, CellResult
from assay.events.publish import stream_key
from assay.extensions import db
from assay.jobs import reaper
from assay.jobs.journal import Journal
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.factories import Factory

CELLS = 24  # the demo run: 12 cases x 2 models


def make_run(factory: Factory, status: RunStatus = RunStatus.running) -> int:
    """A planned demo run (every cell pending) in `status`, with no job enqueued for it."""
    owner = factory.user()
    run_id = factory.finished_run(owner, factory.project(owner, "Reaped"))
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == run_id).values(
            status=status, started_at=utcnow(), finished_at=None))
        session.commit()
    return run_id


def claim_as_dead_owner(run_id: int, count: int, expires_in_s: float) -> list[int]:
    """What a shard that was SIGKILLed leaves behind: cells leased to it, never recorded."""
    with db.factory() as session:
        ids = list(session.scalars(select(Output.id).where(Output.run_id == run_id)
                                   .order_by(Output.id).limit(count)))
        session.execute(update(Output).where(Output.id.in_(ids)).values(
            status=CellStatus.running, lease_owner="dead-shard", attempts=1,
            lease_until=utcnow() + timedelta(seconds=expires_in_s)))
        session.commit()
    return ids


def wait_status(run_id: int, timeout_s: float = 60) -> Run:
    deadline = time.monotonic() + timeout_s
    while True:
        with db.factory() as session:
            run = session.get(Run, run_id)
            assert run is not None
            if run.status != RunStatus.running or time.monotonic() > deadline:
                return run
        time.sleep(0.1)


def outputs(run_id: int) -> list[Output]:
    with db.factory() as session:
        return list(session.scalars(select(Output).where(Output.run_id == run_id)))


def fake_total(fake: FakeProviderThread) -> int:
    return int(httpx.get(f"{fake.url}/_fake/stats").json()["total"])


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch, settings: Settings,
             redis_conn: redis.Redis) -> list[int]:
    """Enqueueing recorded, not sent; and the reaper lock held, so that no worker's reaper
    (another test's worker may be alive) passes meanwhile."""
    redis_conn.set(f"{settings.redis_prefix}:reaper:lock", "tests", px=60_000)
    calls: list[int] = []

    def enqueue(_rt: Any, run_id: int, shards: int | None = None) -> int:
        calls.append(run_id)
        return 1

    monkeypatch.setattr(reaper, "enqueue_run", enqueue)
    return calls


# --- one pass, in this process (enqueueing recorded, not sent) -----------------------------


def test_a_pass_enqueues_only_runs_nobody_works_on(app: Flask, factory: Factory,
                                                    enqueued: list[int],
                                                    settings: Settings) -> None:
    lost = make_run(factory)  # running, pending cells, no lease: its jobs were lost
    dead = make_run(factory)  # a shard died holding leases
    claim_as_dead_owner(dead, 3, expires_in_s=-1)
    busy = make_run(factory)  # a live shard holds leases: leave it alone
    claim_as_dead_owner(busy, 3, expires_in_s=60)
    paused = make_run(factory, RunStatus.paused)
    completed = make_run(factory, RunStatus.completed)
    queued = make_run(factory, RunStatus.pending)  # just created: its jobs are in the queue
    forgotten = make_run(factory, RunStatus.pending)  # pending for longer than a lease
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == forgotten).values(
            created_at=utcnow() - timedelta(seconds=settings.lease_s + 5)))
        session.commit()
    rt = current()
    assert sorted(reaper.reap(rt)) == sorted([lost, dead, forgotten])
    assert sorted(enqueued) == sorted([lost, dead, forgotten])
    assert reaper.reap(rt) == [], "one shard per run per lease period"
    assert sorted(enqueued) == sorted([lost, dead, forgotten])
    assert queued not in enqueued
    with db.factory() as session:
        statuses = dict(session.execute(select(Run.id, Run.status)).all())
    assert statuses[paused] == "paused" and statuses[completed] == "completed"
    assert statuses[busy] == statuses[lost] == statuses[dead] == "running"


def test_a_running_run_with_no_open_cell_is_closed(app: Flask, factory: Factory,
                                                   enqueued: list[int], settings: Settings,
                                                   redis_conn: redis.Redis,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = make_run(factory)
    with db.factory() as session:
        ids = list(session.scalars(select(Output.id).where(Output.run_id == run_id)))
        session.execute(update(Output).where(Output.id.in_(ids[:20])).values(
            status=CellStatus.succeeded, finished_at=utcnow()))
        session.execute(update(Output).where(Output.id.in_(ids[20:])).values(
            status=CellStatus.failed, error_class="server_error", finished_at=utcnow()))
        session.execute(update(Run).where(Run.id == run_id).values(succeeded=20, failed=4))
        session.commit()
    warmed: list[int] = []  # its page and reports are filled ahead, as a shard's end does
    monkeypatch.setattr(reaper, "enqueue_warm", lambda _rt, found: warmed.append(found))
    assert reaper.reap(current()) == [] and enqueued == []
    run = wait_status(run_id, 0)
    assert (run.status, run.succeeded, run.failed) == ("partial", 20, 4)
    assert run.finished_at is not None
    entries = redis_conn.xrange(stream_key(settings.redis_prefix, run_id))
    assert entries[-1][1][b"type"] == b"run.finished"
    assert warmed == [run_id]


def test_what_a_dead_scoring_job_held_is_released_once_its_lease_expires(
        app: Flask, factory: Factory, enqueued: list[int]) -> None:
    run_id = make_run(factory, RunStatus.completed)
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == run_id).values(budget_micros=1000))
        session.commit()
    with db.factory() as session:  # a scoring job reserves a page's judges, then dies
        assert judge_spend.reserve(session, run_id, [300, 300, 300, 300]) == (3, 900)

    def held() -> tuple[int, int, int]:
        with db.factory() as session:
            run = session.get(Run, run_id)
            assert run is not None
            project = session.get(Project, run.project_id)
            assert project is not None
            return run.reserved_micros, run.scoring_reserved_micros, project.reserved_micros

    assert held() == (900, 900, 900)
    reaper.reap(current())
    assert held() == (900, 900, 900), "a live job's lease holds"
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == run_id).values(
            scoring_lease_until=utcnow() - timedelta(seconds=1)))
        session.commit()
    reaper.reap(current())
    assert held() == (0, 0, 0)
    with db.factory() as session:  # the job was only slow: its settle gives back no more
        judge_spend.settle(session, run_id, 900, {})
        session.commit()
    assert held() == (0, 0, 0)


def _budget_left(project_id: int) -> int:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None and project.budget_micros is not None
        return project.budget_micros - project.spent_micros - project.reserved_micros


def _expire(hold: spend.Hold) -> None:
    """Time passes beyond the hold's lease (its owner's job timeout or deadline)."""
    with db.factory() as session:
        session.execute(update(BudgetHold).where(BudgetHold.id == hold.id).values(
            lease_until=utcnow() - timedelta(seconds=1)))
        session.commit()


def test_a_budget_hold_whose_owner_died_is_given_back_and_a_live_one_is_kept(
        app: Flask, factory: Factory, enqueued: list[int]) -> None:
    """A generation job held its most cost, then its worker died before settling; a scorer
    trial beside it is still at work. The reaper frees the cap of the dead one only."""
    owner = factory.user()
    project = factory.project(owner, "Held")
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == project.id).values(
            budget_micros=10_000))
        session.commit()
    with db.factory() as session:
        dead = spend.reserve(session, project.id, None, 6_000, generation_spend.WHAT,
                             lease=generation_spend.LEASE)
        live = spend.reserve(session, project.id, None, 3_000, "trying these judges")
        session.commit()
    assert _budget_left(project.id) == 1_000
    # the cap is taken: another job is refused
    with db.factory() as session, pytest.raises(spend.BudgetExceeded):
        spend.check(session, project.id, 5_000)
    reaper.reap(current())
    assert _budget_left(project.id) == 1_000, "holds within their lease are kept"
    _expire(dead)
    reaper.reap(current())
    assert _budget_left(project.id) == 7_000
    with db.factory() as session:
        spend.check(session, project.id, 5_000)  # the cap is free again
        assert session.scalars(select(BudgetHold.id).where(
            BudgetHold.project_id == project.id)).all() == [live.id]
    reaper.reap(current())  # once only
    assert _budget_left(project.id) == 7_000
    with db.factory() as session:  # the live one settles as usual: what it cost is charged
        tab = ledger.Tab()
        tab.add(None, 1, 500, 250, 250)
        spend.settle(session, live, "trial", tab)
        session.commit()
    assert _budget_left(project.id) == 9_500
    with db.factory() as session:  # the dead job was only slow: its late settle charges
        tab = ledger.Tab()  # what it spent and gives back nothing the reaper gave back
        tab.add(None, 1, 1_000, 500, 500)
        spend.settle(session, dead, "generation", tab)
        session.commit()
        found = session.get(Project, project.id)
        assert found is not None and (found.reserved_micros, found.spent_micros) == (0, 1_500)
        assert session.scalar(select(func.count()).select_from(BudgetHold).where(
            BudgetHold.project_id == project.id)) == 0


def test_an_expired_hold_released_with_its_experiment_is_not_released_twice(
        app: Flask, factory: Factory, enqueued: list[int]) -> None:
    owner = factory.user()
    project = factory.project(owner, "Experiment held")
    with db.factory() as session:
        experiment = Experiment(project_id=project.id, name="E", created_by=owner.id,
                                config={})
        session.add(experiment)
        session.commit()
        experiment_id = experiment.id
    with db.factory() as session:
        hold = spend.reserve(session, project.id, experiment_id, 2_000, "the judges")
        session.commit()
    with db.factory() as session:  # the step's job died: the experiment's holds go back
        assert spend.release_orphaned(session, experiment_id) == 2_000
        session.commit()
    _expire(hold)
    reaper.reap(current())
    with db.factory() as session:
        found, exp = session.get(Project, project.id), session.get(Experiment, experiment_id)
        assert found is not None and exp is not None
        assert found.reserved_micros == exp.reserved_micros == 0


# --- the loop: errors, and one worker per interval --------------------------------------------


class FlakyRedis:
    """Refuses the first `failures` commands, then answers like the real one."""

    def __init__(self, real: redis.Redis, failures: int):
        self.real, self.failures = real, failures

    def set(self, *args: Any, **kwargs: Any) -> Any:
        if self.failures:
            self.failures -= 1
            raise redis.ConnectionError("Redis went away")
        return self.real.set(*args, **kwargs)


def test_the_loop_survives_redis_and_database_errors(app: Flask, settings: Settings,
                                                     redis_conn: redis.Redis,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fast = replace(settings, reaper_interval_s=0.1,  # a lock of its own: no worker holds it
                   redis_prefix=f"{settings.redis_prefix}-{uuid.uuid4().hex[:6]}")
    rt = SimpleNamespace(settings=fast, redis=FlakyRedis(redis_conn, failures=2))
    passes: list[float] = []

    def reap(_rt: Any) -> list[int]:
        passes.append(time.monotonic())
        if len(passes) == 1:
            raise OperationalError("SELECT 1", {}, Exception("the database went away"))
        return []

    monkeypatch.setattr(reaper, "own_runtime", lambda _settings: rt)
    monkeypatch.setattr(reaper, "reap", reap)
    stop = threading.Event()
    thread = threading.Thread(target=reaper.reaper_loop, args=(fast, stop), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while len(passes) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    thread.join(5)
    assert len(passes) >= 3, "the loop stopped after an error"
    assert rt.redis.failures == 0
    assert not thread.is_alive()


def test_one_worker_reaps_per_interval(app: Flask, settings: Settings,
                                       redis_conn: redis.Redis,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    slow = replace(settings, reaper_interval_s=5,  # a lock of its own: no worker holds it
                   redis_prefix=f"{settings.redis_prefix}-{uuid.uuid4().hex[:6]}")
    passes: list[str] = []
    monkeypatch.setattr(reaper, "own_runtime",
                        lambda s: SimpleNamespace(settings=s, redis=redis_conn))
    monkeypatch.setattr(reaper, "reap", lambda _rt: passes.append(
        threading.current_thread().name) or [])
    stop = threading.Event()
    threads = [threading.Thread(target=reaper.reaper_loop, args=(slow, stop), daemon=True,
                                name=f"worker-{i}") for i in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(1)
    stop.set()
    for thread in threads:
        thread.join(5)
    assert len(passes) == 1, passes


# --- a real worker process --------------------------------------------------------------------


@pytest.fixture(scope="module")
def reaping_worker(app: Flask, test_env: dict[str, str],
                   settings: Settings) -> Iterator[subprocess.Popen[bytes]]:
    """A worker whose reaper passes every 0.3 s, with 2 s leases."""
    env = {**os.environ, **test_env, "ASSAY_LEASE_S": "2", "ASSAY_REAPER_INTERVAL_S": "0.3"}
    proc = subprocess.Popen([sys.executable, "-m", "assay", "worker"], env=env)
    queue = Queue(settings.runs_queue, connection=redis.Redis.from_url(test_env["REDIS_URL"]))
    deadline = time.monotonic() + 30
    while not any(w.pid == proc.pid for w in Worker.all(queue=queue)):
        assert proc.poll() is None, "worker exited at start"
        assert time.monotonic() < deadline, "worker did not register"
        time.sleep(0.1)
    yield proc
    proc.terminate()
    proc.wait(timeout=15)


def test_cells_of_a_dead_shard_are_done_once_after_their_lease_expires(
        factory: Factory, reaping_worker: subprocess.Popen[bytes],
        fake_provider: FakeProviderThread) -> None:
    run_id = make_run(factory)
    dead = set(claim_as_dead_owner(run_id, 6, expires_in_s=1))
    calls_before = fake_total(fake_provider)
    run = wait_status(run_id)
    assert run.status == "completed", run.status
    assert (run.succeeded, run.failed, run.skipped) == (CELLS, 0, 0)
    rows = outputs(run_id)
    assert len(rows) == CELLS
    assert len({(o.case_id, o.target_id, o.repeat, o.turn) for o in rows}) == CELLS
    assert all(o.status == "succeeded" and o.text for o in rows)
    for o in rows:
        assert o.lease_owner != "dead-shard"
        assert o.attempts == (2 if o.id in dead else 1), (o.id, o.attempts)
    assert fake_total(fake_provider) - calls_before == CELLS, "a cell was called twice"
    assert reaping_worker.poll() is None


def journal_as_dead_owner(settings: Settings, run_id: int, entries: dict[int, tuple[str, int]],
                         redis_conn: redis.Redis) -> None:
    """What a dead shard journaled before it died: output id -> (shard, attempt)."""
    journal = Journal(redis_conn, settings.redis_prefix, run_id, "")
    for oid, (owner, attempt) in entries.items():
        journal.owner = owner
        cell = cast(Cell, SimpleNamespace(output_id=oid, attempt=attempt))
        assert journal.keep([(cell, CellResult(
            oid, ok=True, text=f"journaled by {owner}", tokens_in=3, tokens_out=4,
            cost_micros=7, latency_ms=5, calls=1, provider="fake", model="fake-fast"))])


def test_a_dead_shards_journaled_results_are_recorded_not_called_again(
        factory: Factory, reaping_worker: subprocess.Popen[bytes],
        fake_provider: FakeProviderThread, settings: Settings,
        redis_conn: redis.Redis) -> None:
    run_id = make_run(factory)
    dead = claim_as_dead_owner(run_id, 6, expires_in_s=1)
    journal_as_dead_owner(settings, run_id, {
        **{oid: ("dead-shard", 1) for oid in dead[:3]},  # its results: recorded as they are
        dead[3]: ("dead-shard", 0),  # an earlier attempt's leftover: never taken up
        dead[4]: ("another-shard", 1),  # not the lease taken over
    }, redis_conn)
    calls_before = fake_total(fake_provider)
    run = wait_status(run_id)
    assert (run.status, run.succeeded, run.failed) == ("completed", CELLS, 0)
    assert fake_total(fake_provider) - calls_before == CELLS - 3
    rows = {o.id: o for o in outputs(run_id)}
    for oid in dead[:3]:
        assert (rows[oid].text, rows[oid].cost_micros, rows[oid].attempts) == (
            "journaled by dead-shard", 7, 2)
    assert all(not rows[oid].text.startswith("journaled") for oid in dead[3:])
    assert run.spent_micros == sum(o.cost_micros or 0 for o in rows.values())
    key = f"{settings.redis_prefix}:run:{run_id}:journal"
    assert not redis_conn.exists(key), "a finished run drops its journal"


def test_a_run_whose_jobs_were_lost_is_picked_up(
        factory: Factory, reaping_worker: subprocess.Popen[bytes]) -> None:
    run_id = make_run(factory)
    run = wait_status(run_id)
    assert run.status == "completed" and run.succeeded == CELLS
    with db.factory() as session:
        assert session.scalar(select(func.count()).where(
            Output.run_id == run_id, Output.status == CellStatus.succeeded)) == CELLS


def test_a_stopped_runs_cells_held_by_a_dead_worker_are_skipped_and_released(
        app: Flask, factory: Factory) -> None:
    run_id = make_run(factory)
    held = claim_as_dead_owner(run_id, 4, expires_in_s=-1)
    with db.factory() as session:  # what their claim reserved, on the cells, run and project
        session.execute(update(Output).where(Output.id.in_(held)).values(reserved_micros=25))
        run = session.get(Run, run_id)
        assert run is not None
        run.reserved_micros, run.status, run.error = 100, RunStatus.cancelled, "Cancelled by a"
        project = session.get(Project, run.project_id)
        assert project is not None
        project.reserved_micros = 100
        session.commit()
    reaper.reap(current())
    with db.factory() as session:
        run = session.get(Run, run_id)
        assert run is not None and run.reserved_micros == 0 and run.skipped == 4
        project = session.get(Project, run.project_id)
        assert project is not None and project.reserved_micros == 0
        cells = session.execute(select(Output.status, Output.error_class, Output.reserved_micros)
                                .where(Output.id.in_(held))).all()
        assert set(cells) == {(CellStatus.skipped, "cancelled", 0)}
        targets = session.scalar(select(func.sum(RunTarget.skipped))
                                 .where(RunTarget.run_id == run_id))
        assert targets == 4
    reaper.reap(current())  # idempotent: nothing left to release
    with db.factory() as session:
        again = session.get(Run, run_id)
        assert again is not None and again.skipped == 4
