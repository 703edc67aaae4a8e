"""Budgets through the real engine: every call reserves its maximum cost before it is sent,
settles to its actual cost with its output, and spent + reserved never passes a cap."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest
from sqlalchemy import func, select, update

from assay.core.datasets.service import create_dataset
from assay.core.projects.models import Project
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.models import Score
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.jobs.scoring import score_run
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.engine.test_providers_engine import Setup, configure, fake, setup  # noqa: F401
from tests.engine.test_scoring_engine import _judge_model, _scorers, _verdict
from tests.factories import Factory


def run(s: Setup, execute: bool = True, **kw: Any) -> int:
    """Like the providers tests' helper, with the project read fresh: merging a detached
    copy would write its stale budget counters back."""
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        created = plan_run(session, None, project, RunSpec(
            dataset_id=s.dataset_id, targets=tuple(TargetSpec(i) for i in s.model_ids), **kw))
        session.commit()
        run_id = created.id
    if execute:
        execute_run(run_id)
    return run_id


def _cap(run_id: int, budget: int | None = None, threshold: float = 0.8,
         project_budget: int | None = None) -> None:
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None
        found.budget_micros, found.alert_threshold = budget, threshold
        if project_budget is not None:
            session.execute(update(Project).where(Project.id == found.project_id)
                            .values(budget_micros=project_budget))
        session.commit()


def _books(run_id: int) -> dict[str, int]:
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None
        project = session.get(Project, found.project_id)
        assert project is not None
        outputs = session.scalar(select(func.coalesce(func.sum(Output.cost_micros), 0))
                                 .where(Output.run_id == run_id))
        judged = session.scalar(select(func.coalesce(func.sum(Output.judge_cost_micros), 0))
                                .where(Output.run_id == run_id))
        held = session.scalar(select(func.coalesce(func.sum(Output.reserved_micros), 0))
                              .where(Output.run_id == run_id))
        targets = session.scalar(select(func.sum(RunTarget.spent_micros))
                                 .where(RunTarget.run_id == run_id))
        counts = dict(session.execute(select(Output.status, func.count())
                                      .where(Output.run_id == run_id)
                                      .group_by(Output.status)).all())
        return {"spent": found.spent_micros, "reserved": found.reserved_micros,
                "outputs": int(outputs or 0), "judged": int(judged or 0),
                "judge_spent": found.judge_spent_micros, "held": int(held or 0),
                "targets": int(targets),
                "project_spent": project.spent_micros,
                "project_reserved": project.reserved_micros,
                "succeeded": found.succeeded, "failed": found.failed, "skipped": found.skipped,
                "status": found.status, "rows_succeeded": counts.get(CellStatus.succeeded, 0),
                "rows_failed": counts.get(CellStatus.failed, 0),
                "rows_skipped": counts.get(CellStatus.skipped, 0)}


def _capped_run(run_id: int, shards: int) -> dict[str, int]:
    """The books after `shards` shards (threads) ran a run its cap stops."""
    shard_threads = [threading.Thread(target=execute_run, args=(run_id,))
                     for _ in range(shards)]
    for thread in shard_threads:
        thread.start()
    for thread in shard_threads:
        thread.join(timeout=120)
    books = _books(run_id)
    _balanced(books)
    assert books["status"] == RunStatus.budget_exceeded
    return books


def _balanced(books: dict[str, int]) -> None:
    assert books["reserved"] == books["held"] == books["project_reserved"] == 0
    # a target's spend is its model's; the run's adds its judges'
    assert books["spent"] == books["outputs"] + books["judged"]
    assert books["outputs"] == books["targets"] and books["judge_spent"] == books["judged"]
    assert (books["succeeded"], books["failed"], books["skipped"]) == (
        books["rows_succeeded"], books["rows_failed"], books["rows_skipped"])


def test_without_a_cap_spend_is_the_sum_of_outputs(factory: Factory, settings: Settings,
                                                   fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0)
    s = setup(factory, settings, fake, cases=12)
    run_id = run(s, cache=False)
    books = _books(run_id)
    _balanced(books)
    assert books["status"] == RunStatus.completed and books["succeeded"] == 12
    assert books["spent"] > 0 and books["project_spent"] == books["spent"]


@pytest.mark.parametrize("shards", [1, 3])
def test_a_small_run_cap_stops_the_run_within_the_cap(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        shards: int) -> None:
    configure(fake, latency_ms=20)
    s = setup(factory, settings, fake, cases=40)
    run_id = run(s, execute=False, cache=False, concurrency=8)
    cap = 200  # a call reserves about 41 micro-dollars and costs less: some fit, not all
    _cap(run_id, cap)
    books = _capped_run(run_id, shards)
    assert 0 < books["spent"] <= cap
    assert books["skipped"] > 0 and books["succeeded"] > 0
    assert books["succeeded"] + books["failed"] + books["skipped"] == 40
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None and found.error and "budget" in found.error
        reasons = set(session.scalars(select(Output.error_class)
                                      .where(Output.run_id == run_id,
                                             Output.status == CellStatus.skipped)))
        assert reasons == {"budget_exceeded"}


def test_a_project_cap_binds_runs_together(factory: Factory, settings: Settings,
                                           fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0)
    s = setup(factory, settings, fake, cases=30)
    first = run(s, execute=False, cache=False)
    _cap(first, project_budget=300)
    execute_run(first)
    second = run(s, execute=False, cache=False)
    execute_run(second)
    one, two = _books(first), _books(second)
    _balanced(one)
    _balanced(two)
    assert one["spent"] + two["spent"] == two["project_spent"] <= 300
    assert two["status"] == RunStatus.budget_exceeded


def test_the_alert_fires_once_at_the_threshold(factory: Factory, settings: Settings,
                                               fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0)
    s = setup(factory, settings, fake, cases=20)
    run_id = run(s, execute=False, cache=False, concurrency=2)
    _cap(run_id, 100_000, threshold=0.0001)
    execute_run(run_id)
    books = _books(run_id)
    _balanced(books)
    assert books["status"] == RunStatus.completed
    events = current().redis.xrange(current().events_key(run_id))
    types = [json.loads(fields[b"data"])["type"] for _, fields in events]
    assert types.count("run.budget_alert") == 1
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None and found.alerted_at is not None


def test_cached_cells_reserve_nothing_and_cost_nothing(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0)
    s = setup(factory, settings, fake, cases=10)
    first = run(s)  # temperature 0: cacheable
    spent = _books(first)["spent"]
    second = run(s, execute=False)
    _cap(second, 1)  # no room for one real call, but every call is a cache hit
    execute_run(second)
    books = _books(second)
    _balanced(books)
    assert books["status"] == RunStatus.completed and books["spent"] == 0 and spent > 0


def _judged_setup(factory: Factory, settings: Settings,
                  fake: FakeProviderThread, cases: int) -> tuple[Setup, int]:  # noqa: F811
    """The providers setup with an LLM judge scorer whose judge is a priced model."""
    configure(fake, latency_ms=20, scripts=[
        {"model": "fake-judge", "pattern": "", "reply": _verdict(4, 5)}])
    s = setup(factory, settings, fake, cases=cases)
    (scorer_id,) = _scorers(s.project.id, _judge_model(s.project.id, fake.url))[2:]
    return s, scorer_id


def test_judges_are_paid_by_the_run_and_project_not_the_target(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    s, scorer_id = _judged_setup(factory, settings, fake, cases=12)
    run_id = run(s, cache=False, scorer_ids=(scorer_id,))
    books = _books(run_id)
    _balanced(books)
    assert books["status"] == RunStatus.completed and books["succeeded"] == 12
    assert books["judged"] > 0 and books["outputs"] > 0
    assert books["project_spent"] == books["spent"] == books["outputs"] + books["judged"]
    with db.factory() as session:
        rows = session.execute(select(Output.judge_cost_micros, Score.details).join(
            Score, Score.output_id == Output.id).where(Output.run_id == run_id)).all()
    assert len(rows) == 12
    for judged, details in rows:  # each output carries what its judge call cost
        assert judged == details["usage"]["cost_micros"] > 0


@pytest.mark.parametrize("shards", [1, 3])
def test_judges_are_reserved_with_their_calls_so_a_cap_holds(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        shards: int) -> None:
    s, scorer_id = _judged_setup(factory, settings, fake, cases=40)
    run_id = run(s, execute=False, cache=False, concurrency=8, scorer_ids=(scorer_id,))
    # a cell reserves about 41 (call) + 240 (judge: max_tokens 2000) micro-dollars and
    # spends about 60 in all: a handful fit at a time, a dozen or so in all
    cap = 1000
    _cap(run_id, cap)
    books = _capped_run(run_id, shards)
    assert books["judged"] > 0 and books["spent"] <= cap
    assert books["skipped"] > 0 and books["succeeded"] > 0


def test_the_scoring_job_reserves_its_judges_and_stops_at_the_cap(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    s, scorer_id = _judged_setup(factory, settings, fake, cases=1)
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        dataset = create_dataset(session, None, project, "traces", "traces", [
            {"trace": {"messages": [{"role": "user", "content": f"Question {i}?"},
                                    {"role": "assistant", "content": f"Answer {i}."}]}}
            for i in range(10)])
        # a verdict may take 2,000 tokens (200 micro-dollars) and takes about 80: each
        # output reserves about 230 and spends about 40
        planned = plan_run(session, None, project, RunSpec(
            dataset_id=dataset.id, scorer_ids=(scorer_id,), budget_micros=700))
        session.commit()
        run_id = planned.id
    first = score_run(run_id)
    assert 0 < first < 10, "the cap held the job back"
    books = _books(run_id)
    assert books["reserved"] == books["held"] == books["project_reserved"] == 0
    assert 0 < books["spent"] == books["judged"] == books["judge_spent"] <= 700
    assert books["project_spent"] == books["spent"] and books["outputs"] == 0
    events = current().redis.xrange(current().events_key(run_id))
    last = json.loads(events[-1][1][b"data"])  # the job's end says why it ended early
    assert last["type"] == "run.scoring_finished" and last["stopped"] == "budget_exceeded"
    again = score_run(run_id)  # the room the settled verdicts left: a few more
    assert again > 0 and _books(run_id)["spent"] <= 700
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == run_id).values(budget_micros=None))
        session.commit()
    assert score_run(run_id) == 10 - first - again  # no cap: the rest
    books = _books(run_id)
    assert books["spent"] == books["judged"] and books["reserved"] == 0
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None and found.scoring_reserved_micros == 0


def _with_dear_model(s: Setup) -> int:
    """A second target on the same credential whose one call may cost $0.007: more than
    the caps in these tests, while the providers setup's model reserves about $0.00004."""
    from assay.core.llm.models import ModelConfig
    with db.factory() as session:
        cheap = session.get(ModelConfig, s.model_ids[0])
        assert cheap is not None
        dear = ModelConfig(project_id=s.project.id, credential_id=cheap.credential_id,
                           name="Dear", model="fake-fast",
                           input_price_per_mtok_micros=100_000_000,
                           output_price_per_mtok_micros=100_000_000,
                           params={"temperature": 0, "max_tokens": 64})
        session.add(dear)
        session.commit()
        s.model_ids.append(dear.id)
        return dear.id


@pytest.mark.parametrize("shards", [1, 3])
def test_cells_that_fit_run_when_dearer_ones_cannot(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        shards: int) -> None:
    """Cases x (dear, cheap): every dear call is priced out by the cap, and every cheap
    one fits. The cheap ones all run; the dear ones are skipped for the budget, with the
    reason in dollars; the run ends out of budget, its books balanced."""
    configure(fake, latency_ms=5)
    s = setup(factory, settings, fake, cases=8)
    dear_id = _with_dear_model(s)
    s.model_ids.reverse()  # the dear target first: its cells come first in every claim
    run_id = run(s, execute=False, cache=False, concurrency=4)
    _cap(run_id, 1000)
    books = _capped_run(run_id, shards)
    assert books["succeeded"] == 8 and books["skipped"] == 8 and books["failed"] == 0
    with db.factory() as session:
        rows = session.execute(select(RunTarget.model_id, Output.status, Output.error_class,
                                      Output.error_message, Output.attempts)
                               .join(RunTarget, RunTarget.id == Output.target_id)
                               .where(Output.run_id == run_id)).all()
        found = session.get(Run, run_id)
        assert found is not None
        error = found.error
        per_target = {t.model_id: (t.succeeded, t.skipped) for t in session.scalars(
            select(RunTarget).where(RunTarget.run_id == run_id))}
    assert per_target[dear_id] == (0, 8) and per_target[s.model_ids[1]] == (8, 0)
    for model_id, status, error_class, message, attempts in rows:
        if model_id == dear_id:
            assert (status, error_class, attempts) == (
                CellStatus.skipped, "budget_exceeded", 0)
            assert re.fullmatch(r"This call may cost up to \$0\.00[6-9]\d* and the budget "
                                r"has \$0\.00\d+ left", message), message
        else:
            assert status == CellStatus.succeeded
    assert error is not None and error.startswith("This call may cost up to $")


def test_a_budget_stop_reason_is_in_dollars(factory: Factory, settings: Settings,
                                            fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0)
    s = setup(factory, settings, fake, cases=4)
    run_id = run(s, execute=False, cache=False)
    _cap(run_id, 10)  # a call reserves about 41 micro-dollars: none fits
    execute_run(run_id)
    books = _books(run_id)
    _balanced(books)
    assert books["status"] == RunStatus.budget_exceeded and books["skipped"] == 4
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None and found.error is not None
        assert "micro" not in found.error
        assert found.error.endswith("and the budget has $0.00001 left"), found.error
