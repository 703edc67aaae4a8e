"""The loop on three real RQ workers: a run's finalisation enqueues the next step (no job
waits on a run); the experiment's budget holds over execution, judging and refinement with
the run's shards on three workers; a worker SIGKILLed mid-iteration loses nothing and
repeats at most the calls it had in flight."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest
import redis
from flask import Flask
from rq import Queue, Worker
from sqlalchemy import func, select

from assay.core.experiments.models import Experiment, Iteration
from assay.core.runs.models import Output, Run
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.experiment_setup import build, experiment, iterations
from tests.engine.test_global_concurrency import start_worker
from tests.engine.test_providers_engine import fake, stats  # noqa: F401
from tests.factories import Factory


@pytest.fixture(scope="module")
def workers(app: Flask, test_env: dict[str, str],
            settings: Settings) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [start_worker(test_env) for _ in range(3)]
    queue = Queue(settings.runs_queue, connection=redis.Redis.from_url(test_env["REDIS_URL"]))
    deadline = time.monotonic() + 90
    try:
        while {p.pid for p in procs} - {w.pid for w in Worker.all(queue=queue)}:
            assert all(p.poll() is None for p in procs), "a worker exited at start"
            assert time.monotonic() < deadline, "the workers did not register"
            time.sleep(0.2)
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def wait_for(check: Callable[[], bool], what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def first_status(experiment_id: int) -> str | None:
    found = iterations(experiment_id)
    return found[0].status if found else None


def test_the_loop_advances_on_workers_from_the_runs_finalisation(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        workers: list[subprocess.Popen[bytes]]) -> None:
    b = build(factory, settings, fake, stop={"max_iterations": 2})
    wait_for(lambda: first_status(b.experiment_id) == "awaiting_review", "the suggestion")
    me = factory.login(b.owner)
    url = f"/api/projects/{b.project.id}/experiments/{b.experiment_id}"
    assert me.post(url + "/iterations/1/approve", json={}).status_code == 200
    wait_for(lambda: experiment(b.experiment_id).status == "completed", "the stop")
    done = experiment(b.experiment_id)
    assert done.stop_reason == "max_iterations"
    assert [i.status for i in iterations(b.experiment_id)] == ["approved", "completed"]


def test_the_budget_holds_over_every_phase_on_three_workers(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        workers: list[subprocess.Popen[bytes]]) -> None:
    cap = 4_000
    b = build(factory, settings, fake, cases=60, budget_micros=cap, latency_ms=20,
              run={"concurrency": 6, "shards": 3})
    wait_for(lambda: experiment(b.experiment_id).status == "completed", "the budget stop")
    done = experiment(b.experiment_id)
    assert done.stop_reason == "budget", done.stop_detail
    with db.factory() as session:
        runs = list(session.scalars(select(Run).where(Run.id.in_(
            [i.run_id for i in iterations(b.experiment_id)]))))
        run_spend = sum(r.spent_micros for r in runs)
        found = session.get(Experiment, b.experiment_id)
        assert found is not None and found.reserved_micros == 0
    assert run_spend + done.refinement_micros <= cap
    assert done.spent_micros <= cap
    assert done.execution_micros + done.judging_micros == run_spend


def test_a_worker_killed_mid_iteration_loses_nothing(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        workers: list[subprocess.Popen[bytes]]) -> None:
    """Last in the module: it kills one of the three workers."""
    cases, window = 60, 6
    b = build(factory, settings, fake, cases=cases, latency_ms=60,
              run={"concurrency": window, "shards": 3})
    wait_for(lambda: stats(fake)["total"] >= 15, "the run to start")
    victim = workers[0]
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait(timeout=10)
    wait_for(lambda: first_status(b.experiment_id) == "awaiting_review", "the suggestion",
             timeout=120)
    (it,) = iterations(b.experiment_id)
    with db.factory() as session:
        run = session.get(Run, it.run_id)
        assert run is not None and run.status == "completed" and run.succeeded == cases
        per_cell = session.execute(select(Output.case_id, func.count()).where(
            Output.run_id == run.id).group_by(Output.case_id)).all()
        assert len(per_cell) == cases and all(n == 1 for _, n in per_cell)
        suggestions = session.scalar(select(func.count()).select_from(Iteration).where(
            Iteration.experiment_id == b.experiment_id))
    assert suggestions == 1
    # every cell calls the model once and its judge once; the refiner once; a dead worker's
    # calls in flight (its share of the window, model and judge) may be made again
    assert stats(fake)["total"] <= 2 * cases + 1 + 2 * window
    assert it.composite is not None
