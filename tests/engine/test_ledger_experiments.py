"""One ledger for an experiment's calls: the refiner ("refinement") and the pairwise judge
against the previous iteration ("pairwise_judge") beside the runs' cells and judges, all on
the fake provider. What it counts for the judge model equals the ledger's sum of those
purposes credited to that model, each purpose present; with the project's cap used up once
the first run is done, the refiner is not called (nothing more reaches the provider) and
the experiment stops for its budget."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select, update

from assay.core.experiments import loop
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.reports.models import SpendDay, TargetDay
from assay.core.runs.models import Run, RunTarget
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.experiment_setup import Built, build, experiment, recorded  # noqa: F401
from tests.engine.test_experiment_loop import Calls, drive
from tests.engine.test_experiment_pairwise import _to_second_run
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory

CASES = 6


def _stats(fake: FakeProviderThread) -> dict[str, Any]:  # noqa: F811
    return dict(httpx.get(f"{fake.url}/_fake/stats").json())


def _ledger(project_id: int) -> dict[tuple[str, int], tuple[int, int, int]]:
    with db.factory() as session:
        return {(k, int(m)): (int(c), int(i), int(o)) for k, m, c, i, o in session.execute(
            select(SpendDay.kind, SpendDay.model_key, func.sum(SpendDay.calls),
                   func.sum(SpendDay.tokens_in), func.sum(SpendDay.tokens_out))
            .where(SpendDay.project_id == project_id)
            .group_by(SpendDay.kind, SpendDay.model_key))}


def _judge_id(b: Built) -> int:
    with db.factory() as session:
        found = session.scalar(select(ModelConfig.id).where(
            ModelConfig.project_id == b.project.id, ModelConfig.name == "Judge"))
        assert found is not None
        return int(found)


def _held(b: Built) -> tuple[int, int]:
    with db.factory() as session:
        project = session.get(Project, b.project.id)
        assert project is not None
        return project.reserved_micros, experiment(b.experiment_id).reserved_micros


def test_an_experiments_calls_are_on_the_ledger_by_purpose_and_judge_model(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake, pairwise=True, stop={"max_iterations": 2},
              cases=CASES)  # the provider's stats start from here
    _to_second_run(b, factory, recorded)
    drive(recorded)
    assert experiment(b.experiment_id).status == "completed"
    billed = _stats(fake)["billed"]
    judge = _judge_id(b)
    ledger = _ledger(b.project.id)
    purposes = {"judges", "refinement", "pairwise_judge"}
    assert {k for k, m in ledger if m == judge} == purposes  # each there, by the judge
    assert all(m == judge for _, m in ledger)
    on_ledger = [sum(v[i] for (k, m), v in ledger.items() if m == judge) for i in range(3)]
    assert on_ledger == [billed["fake-judge"][k] for k in ("calls", "tokens_in", "tokens_out")]
    with db.factory() as session:  # the runs' own cells: target_days, by their model
        cells = session.execute(select(func.sum(TargetDay.tokens_in),
                                       func.sum(TargetDay.tokens_out))
                                .join(RunTarget, RunTarget.id == TargetDay.target_id)
                                .join(Run, Run.id == RunTarget.run_id)
                                .where(Run.project_id == b.project.id)).one()
    assert tuple(cells) == (billed["fake-fast"]["tokens_in"], billed["fake-fast"]["tokens_out"])
    assert _held(b) == (0, 0)


def test_with_the_cap_used_up_the_refiner_is_not_called(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake, cases=CASES)
    kind, run_id = recorded.pop(0)
    assert kind == loop.RUN
    execute_run(run_id)
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == b.project.id)
                        .values(budget_micros=Project.spent_micros))
        session.commit()
    sent = _stats(fake)["total"]
    drive(recorded)
    assert _stats(fake)["total"] == sent  # nothing more reached the provider
    done = experiment(b.experiment_id)
    assert (done.status, done.stop_reason) == ("completed", "budget"), done.stop_detail
    assert done.stop_detail == "Budget reached: the refiner's call would exceed the cap"
    assert not any(k == "refinement" for k, _ in _ledger(b.project.id))
    assert _held(b) == (0, 0)


def test_with_the_cap_used_up_the_pairwise_judge_is_not_called(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake, pairwise=True, stop={"max_iterations": 3},
              cases=CASES)
    _to_second_run(b, factory, recorded)
    with db.factory() as session:  # the project's cap: what it spent, no more
        session.execute(update(Project).where(Project.id == b.project.id)
                        .values(budget_micros=Project.spent_micros))
        session.commit()
    sent = _stats(fake)["total"]
    drive(recorded)
    assert _stats(fake)["total"] == sent
    done = experiment(b.experiment_id)
    assert (done.status, done.stop_reason) == ("completed", "budget"), done.stop_detail
    assert not any(k == "pairwise_judge" for k, _ in _ledger(b.project.id))
    assert _held(b) == (0, 0)
