"""Fault tests of the run engine (issue: "whatever fails underneath, exactly one result per
cell"), with real worker processes, a real Redis server and the fake provider in its own
process. On PostgreSQL several workers share each run; on SQLite one worker does (the
embedded mode)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.datasets.service import create_dataset
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.runs import control
from assay.core.runs.models import CellStatus, Output, Run, RunStatus
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.extensions import db
from assay.providers.base import ERROR_CLASSES
from assay.settings import Settings
from tests.factories import Factory
from tests.faults.ledger import assert_balanced, books
from tests.faults.stack import Stack, status, wait_finished, wait_for

pytestmark = pytest.mark.faults


@pytest.fixture
def stack(test_env: dict[str, str], settings: Settings) -> Iterator[Stack]:
    s = Stack(test_env)
    s.start_redis()
    s.start_fake(latency_ms=100, jitter_ms=0, fault_rate=0)
    try:
        yield s
    finally:
        s.close()


def workers(settings: Settings) -> int:
    """Several workers share a run on PostgreSQL; the embedded mode (SQLite) has one."""
    return 1 if settings.is_sqlite else 3


def make_run(factory: Factory, stack: Stack, cases: int, budget: int | None = None,
             **settings: Any) -> int:
    owner = factory.user()
    project = factory.project(owner, "Faults")
    with db.factory() as session:
        found = session.get(Project, project.id)
        assert found is not None
        credential = Credential(project_id=project.id, kind="fake", label="fake",
                                base_url=stack.fake_url, config={})
        session.add(credential)
        session.flush()
        model = ModelConfig(project_id=project.id, credential_id=credential.id, name="M",
                            model="fake-fast", input_price_per_mtok_micros=150_000,
                            output_price_per_mtok_micros=600_000,
                            params={"temperature": 0.7, "max_tokens": 64})
        session.add(model)
        session.flush()
        dataset = create_dataset(session, None, found, "qs", "questions", [
            {"input": {"question": f"question number {i} about things"}}
            for i in range(cases)])
        run = plan_run(session, None, found, RunSpec(
            dataset_id=dataset.id, targets=(TargetSpec(model.id),), cache=False,
            budget_micros=budget, **settings))
        session.commit()
        return run.id


def act(stack: Stack, action: str, run_id: int) -> Run:
    """A control action as the API performs it: the transition, then shards when it needs."""
    with db.factory() as session:
        run = session.get(Run, run_id)
        assert run is not None
        control.ACTIONS[action](session, None, run)
        session.commit()
    if action in control.STARTS_SHARDS:
        stack.enqueue(run_id)
    return run


def test_sigkill_of_every_worker_twice_loses_and_repeats_nothing(
        factory: Factory, stack: Stack, settings: Settings) -> None:
    concurrency = 20
    run_id = make_run(factory, stack, 2000, concurrency=concurrency, timeout_s=10)
    count = workers(settings)
    stack.start_workers(count)
    stack.enqueue(run_id)
    kills = 0
    for threshold in (300, 1000):
        wait_for(run_id, lambda r, t=threshold: r.succeeded >= t, f"{threshold} done")
        stack.kill_workers()
        kills += 1
        stack.start_workers(count)
        if kills == 1:
            stack.enqueue(run_id)  # as after a crash; the reaper would enqueue it too
    run = wait_finished(run_id, timeout=180)
    b = books(run_id)
    assert_balanced(b)
    assert run.status == RunStatus.completed and b["counts"] == (2000, 0, 0)
    # a shard that dies repeats only its calls in flight, at most `concurrency`: the results
    # it had not yet written are in the journal, and the shard taking over records them
    shards = max(count, 2)
    requests, bound = stack.fake_requests(), 2000 + kills * shards * concurrency
    print(f"fake provider requests: {requests} (bound {bound})")
    assert requests <= bound, (requests, bound)


def test_a_redis_restart_mid_run_loses_nothing(factory: Factory, stack: Stack,
                                               settings: Settings) -> None:
    run_id = make_run(factory, stack, 600, concurrency=10, timeout_s=10)
    stack.start_workers(workers(settings))
    stack.enqueue(run_id)
    wait_for(run_id, lambda r: r.succeeded >= 100, "100 done")
    stack.stop_redis()
    stack.start_redis()  # empty: queued jobs and events are gone, the database has the rest
    run = wait_finished(run_id, timeout=180)
    b = books(run_id)
    assert_balanced(b)
    assert run.status == RunStatus.completed and b["counts"] == (600, 0, 0)


def test_three_workers_at_full_concurrency_keep_within_a_small_budget(
        factory: Factory, stack: Stack, settings: Settings) -> None:
    stack.configure_fake(latency_ms=30)
    cap = 5_000  # a call reserves about 41 micro-dollars and costs less
    run_id = make_run(factory, stack, 3000, budget=cap, concurrency=100, timeout_s=10)
    stack.start_workers(workers(settings))
    stack.enqueue(run_id)
    run = wait_finished(run_id, timeout=180)
    b = books(run_id)
    assert_balanced(b)
    assert run.status == RunStatus.budget_exceeded
    assert 0 < b["spent"] <= cap and b["counts"][2] > 0
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None and found.error


def test_twenty_percent_faults_end_classified(factory: Factory, stack: Stack,
                                              settings: Settings) -> None:
    stack.configure_fake(latency_ms=20, fault_rate=0.2, hang_s=5, retry_after_s=0.05)
    run_id = make_run(factory, stack, 400, concurrency=20, timeout_s=1)
    stack.start_workers(workers(settings))
    stack.enqueue(run_id)
    run = wait_finished(run_id, timeout=180)
    b = books(run_id)
    assert_balanced(b)
    assert run.status == RunStatus.partial, b  # some cells fail even after their retries
    assert b["counts"][0] + b["counts"][1] == 400 and b["counts"][1] > 0
    with db.factory() as session:
        classes = set(session.scalars(select(Output.error_class).where(
            Output.run_id == run_id, Output.status == "failed")))
    assert classes and classes <= set(ERROR_CLASSES), classes
    stack.configure_fake(fault_rate=0)
    act(stack, "retry-failed", run_id)
    run = wait_finished(run_id, timeout=180)
    b = books(run_id)
    assert_balanced(b)
    assert run.status == RunStatus.completed and b["counts"] == (400, 0, 0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pause_resume_and_cancel_at_random_points_keep_counts(
        factory: Factory, stack: Stack, settings: Settings, seed: int) -> None:
    rng = random.Random(seed)
    stack.configure_fake(latency_ms=20)
    total = 800
    run_id = make_run(factory, stack, total, concurrency=10, timeout_s=10)
    stack.start_workers(workers(settings))
    stack.enqueue(run_id)
    for _ in range(3):
        mark = rng.randrange(20, 200)
        done_before = status(run_id).succeeded
        wait_for(run_id, lambda r, m=mark, d=done_before: r.succeeded >= min(d + m, total - 1),
                 "some progress")
        if status(run_id).status != RunStatus.running:
            break
        act(stack, "pause", run_id)
        wait_for(run_id, lambda r: _settled(r.id), "in-flight cells recorded")
        paused = status(run_id)  # read after: the run read by wait_for predates the check
        time.sleep(rng.uniform(0, 0.5))
        still = status(run_id)
        assert (still.succeeded, still.failed) == (paused.succeeded, paused.failed)
        assert_consistent(run_id)
        act(stack, "resume", run_id)
    if rng.random() < 0.67 and status(run_id).status == RunStatus.running:
        act(stack, "cancel", run_id)
        wait_for(run_id, lambda r: _settled(r.id), "in-flight cells recorded")
        run = status(run_id)
        b = books(run_id)
        assert_balanced(b)
        assert run.status == RunStatus.cancelled
        assert sum(b["counts"]) == total and b["counts"][2] > 0
    else:
        run = wait_finished(run_id, timeout=180)
        b = books(run_id)
        assert_balanced(b)
        assert run.status == RunStatus.completed and b["counts"] == (total, 0, 0)


def _settled(run_id: int) -> bool:
    """No cell of the run is in flight any more."""
    with db.factory() as session:
        return not session.scalar(select(func.count()).where(
            Output.run_id == run_id, Output.status == CellStatus.running))


def assert_consistent(run_id: int) -> None:
    """Mid-run books: counters equal the rows, and what is reserved is what cells hold."""
    b = books(run_id)
    rows = b["rows_by_status"]
    assert b["counts"] == (rows.get("succeeded", 0), rows.get("failed", 0),
                           rows.get("skipped", 0)), b
    assert b["spent"] == b["outputs_cost"] == b["targets_spent"] and b["reserved"] == b["held"]


def test_ten_runs_at_once_each_get_exactly_their_cells(factory: Factory, stack: Stack,
                                                       settings: Settings) -> None:
    stack.configure_fake(latency_ms=20)
    run_ids = [make_run(factory, stack, 150, concurrency=10, timeout_s=10) for _ in range(10)]
    stack.start_workers(workers(settings))
    for run_id in run_ids:
        stack.enqueue(run_id)
    for run_id in run_ids:
        run = wait_finished(run_id, timeout=180)
        b = books(run_id)
        assert_balanced(b)
        assert run.status == RunStatus.completed and b["counts"] == (150, 0, 0)
