"""The optional pairwise judge against the previous iteration, on the fake provider: from
the second iteration the run is followed by a judging phase whose verdicts give the win
rate (instead of the per-case composites); its calls are held against the caps like the
others and its cost lands in the judging phase; it pauses, resumes and stops for budget."""

from __future__ import annotations

from sqlalchemy import func, select

from assay.core.experiments import aggregate as agg
from assay.core.experiments.models import Experiment
from assay.core.projects.models import Project
from assay.core.reports.models import SpendDay
from assay.core.runs.models import Run
from assay.core.scoring.models import Comparison
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.experiment_setup import (
    Built,
    build,
    experiment,
    iterations,
    recorded,  # noqa: F401
)
from tests.engine.test_experiment_loop import Calls, drive, url
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory

CASES = 10


def _to_second_run(b: Built, factory: Factory, calls: Calls) -> None:
    """Iteration 1 to review, the refiner's diff approved as is, iteration 2's run done."""
    me = factory.login(b.owner)
    drive(calls)
    first = iterations(b.experiment_id)[0]
    assert first.status == "awaiting_review"
    assert first.aggregate["win_rate"] == {}  # nothing before it
    assert me.post(url(b, "/iterations/1/approve"), json={}).json["next_iteration"] == 2
    kind, run_id = calls.pop(0)
    assert kind == "run"
    execute_run(run_id)


def _comparisons(run_id: int | None) -> list[Comparison]:
    with db.factory() as session:
        return list(session.scalars(select(Comparison).where(Comparison.run_id == run_id)))


def _reserved(b: Built) -> tuple[int, int]:
    with db.factory() as session:
        project = session.get(Project, b.project.id)
        found = session.get(Experiment, b.experiment_id)
        assert project is not None and found is not None
        return project.reserved_micros, found.reserved_micros


def test_the_win_rate_comes_from_the_pairwise_judge_and_its_cost_from_the_judging_phase(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake, pairwise=True, stop={"max_iterations": 2},
              cases=CASES)
    _to_second_run(b, factory, recorded)
    first, second = iterations(b.experiment_id)
    assert second.status == "judging" and _comparisons(second.run_id) == []
    spent_before = experiment(b.experiment_id).judging_micros
    drive(recorded)
    first, second = iterations(b.experiment_id)
    assert second.status == "completed", experiment(b.experiment_id).stop_detail
    assert experiment(b.experiment_id).stop_reason == "max_iterations"
    rows = _comparisons(second.run_id)
    assert len(rows) == CASES and {r.error for r in rows} == {None}
    # A is this iteration (it carries D1's change, which the judge prefers in both orders)
    assert {r.winner for r in rows} == {"a"} and not any(r.position_bias for r in rows)
    target = second.aggregate["best_model"]
    win = second.aggregate["win_rate"][target]
    assert win["source"] == "pairwise" and win["n"] == CASES and win["mean"] == 1.0
    assert win["low"] is not None and win["low"] <= win["mean"] <= win["high"]
    # the rubric judge scored both iterations alike: per-case composites would say 0.5
    by_composite = agg.win_rates(second.aggregate["cases"], first.aggregate["cases"], None)
    assert by_composite[target]["mean"] == 0.5 and by_composite[target]["source"] == "composite"
    # its cost is the judging phase's, charged to the project and its cost report
    done = experiment(b.experiment_id)
    with db.factory() as session:
        run = session.get(Run, second.run_id)
        assert run is not None
        pairwise = done.judging_micros - spent_before  # the run's was counted already
        assert pairwise > 0
        assert second.judging_micros == run.judge_spent_micros + pairwise
        reported = session.scalar(select(func.sum(SpendDay.spent_micros)).where(
            SpendDay.project_id == b.project.id, SpendDay.kind == "pairwise_judge"))
        assert reported == pairwise
    assert _reserved(b) == (0, 0)
    report = factory.login(b.owner).get(url(b, "/report")).json
    assert report["iterations"][1]["win_rate"] == win
    assert report["cost"]["judging_micros"] == done.judging_micros


def test_judging_pauses_and_resumes_without_judging_a_pair_twice(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake, pairwise=True, stop={"max_iterations": 2},
              cases=CASES)
    me = factory.login(b.owner)
    _to_second_run(b, factory, recorded)
    paused = me.post(url(b, "/pause"))
    assert paused.status_code == 200 and paused.json["iteration"]["phase"] == "judging"
    drive(recorded)  # the step finds the pause before judging anything
    assert iterations(b.experiment_id)[1].status == "judging"
    assert _comparisons(iterations(b.experiment_id)[1].run_id) == []
    assert me.post(url(b, "/resume")).status_code == 200
    drive(recorded)
    second = iterations(b.experiment_id)[1]
    assert second.status == "completed"
    assert len(_comparisons(second.run_id)) == CASES
    from assay.jobs.experiments import advance

    loop_again = advance(second.id)  # a repeated job finds nothing left to judge
    assert loop_again == "nothing" and len(_comparisons(second.run_id)) == CASES


def test_judging_stops_at_the_budget_and_the_experiment_ends_for_it(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake, pairwise=True, stop={"max_iterations": 3},
              cases=CASES)
    _to_second_run(b, factory, recorded)
    with db.factory() as session:  # room for a few pairs, not for ten
        found = session.get(Experiment, b.experiment_id)
        assert found is not None
        cap = found.spent_micros + 3_000
        found.budget_micros = cap
        session.commit()
    drive(recorded)
    done = experiment(b.experiment_id)
    second = iterations(b.experiment_id)[1]
    judged = len(_comparisons(second.run_id))
    assert 0 < judged < CASES, judged
    assert done.status == "completed" and done.stop_reason == "budget", done.stop_detail
    assert done.stop_detail and f"{judged} of {CASES} compared" in done.stop_detail
    assert done.spent_micros <= cap and _reserved(b) == (0, 0)
    assert second.aggregate["win_rate"][second.aggregate["best_model"]]["n"] == judged


def test_the_reaper_gives_back_what_a_dead_judging_job_held_and_starts_it_again(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    from assay.core.base import utcnow
    from assay.core.experiments import spend
    from assay.core.experiments.models import Iteration
    from assay.jobs.experiments import STALE, _lock_key, advance, stale
    from assay.runtime import current

    b = build(factory, settings, fake, pairwise=True, stop={"max_iterations": 2},
              cases=CASES)
    _to_second_run(b, factory, recorded)
    second = iterations(b.experiment_id)[1]
    with db.factory() as session:  # a job that held two pairs, then was killed
        for _ in range(2):
            spend.reserve(session, b.project.id, b.experiment_id, 700)
        row = session.get(Iteration, second.id)
        assert row is not None
        row.phase_started_at = utcnow() - STALE * 2
        session.commit()
    assert _reserved(b) == (1400, 1400)
    rt = current()
    lock = rt.redis.lock(_lock_key(rt, second.id), timeout=60)
    assert lock.acquire(blocking=False)  # a live job on a long phase: left alone
    try:
        assert second.id in stale(rt) and _reserved(b) == (1400, 1400)
    finally:
        lock.release()
    assert second.id in stale(rt) and _reserved(b) == (0, 0)
    assert advance(second.id) == "stopped"  # the step repeated judges every pair
    assert len(_comparisons(second.run_id)) == CASES and _reserved(b) == (0, 0)
