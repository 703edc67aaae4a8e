"""The report rollups stay equal to a recount from the outputs and scores through
everything that changes them: a scored run with injected faults, retry-failed (failed cells
leave their day's sums, their new results come in), a second run of the same model and
cases (the per-case sums add up across runs), and a reviewer's manual scores set, changed
and taken back."""

from __future__ import annotations

import os
from typing import Any

import redis
from flask import Flask
from flask_migrate import downgrade, upgrade
from rq import Queue
from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.projects.models import Project
from assay.core.reports import rollups
from assay.core.reports.models import ScoreCase, TargetDay, TargetLatency
from assay.core.runs import control
from assay.core.runs.models import CellStatus, Output, Run, RunStatus
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring import manual
from assay.core.scoring.service import create_scorer
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.conftest import REDIS_URL, _settle_warm_jobs, end_other_connections
from tests.engine.test_providers_engine import configure, fake, setup  # noqa: F401
from tests.factories import Factory

BEFORE_ROLLUPS = "4fd50fd5cfd4"


def _tables(session: Session) -> dict[str, set[tuple[Any, ...]]]:
    """Every rollup row, without the all-zero ones (a recount leaves those out)."""
    days = {tuple(r) for r in session.execute(select(
        TargetDay.target_id, TargetDay.day, TargetDay.outputs, TargetDay.succeeded,
        TargetDay.spent_micros, TargetDay.tokens_in, TargetDay.tokens_out))}
    latencies = {tuple(r) for r in session.execute(select(
        TargetLatency.target_id, TargetLatency.day, TargetLatency.latency_ms, TargetLatency.n))}
    cases = {(s, v, m, c, round(t, 9), n, p, j) for s, v, m, c, t, n, p, j in session.execute(
        select(ScoreCase.scorer_id, ScoreCase.version_key, ScoreCase.model_key,
               ScoreCase.case_id, ScoreCase.total, ScoreCase.n, ScoreCase.passed,
               ScoreCase.judged))}
    return {"days": {r for r in days if any(r[2:])},
            "latencies": {r for r in latencies if r[3]},
            "cases": {r for r in cases if any(r[5:])}}


def assert_rollups_exact() -> dict[str, set[tuple[Any, ...]]]:
    with db.factory() as session:
        kept = _tables(session)
        rollups.rebuild(session)
        recounted = _tables(session)
        session.rollback()
    assert kept == recounted
    return kept


def _run(project_id: int, dataset_id: int, model_id: int, scorer_ids: tuple[int, ...]) -> int:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        run = plan_run(session, None, project, RunSpec(
            dataset_id=dataset_id, targets=(TargetSpec(model_id),), scorer_ids=scorer_ids,
            cache=False))
        session.commit()
        return run.id


def test_rollups_equal_a_recount_through_faults_retries_reruns_and_reviews(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        app: Flask,
        test_env: dict[str, str]) -> None:
    configure(fake, latency_ms=0, jitter_ms=30, fault_rate=0.3, faults=["malformed"], seed=7)
    owner = factory.user()
    s = setup(factory, settings, fake, cases=30, owner=owner)
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        check_config, check_first = create_scorer(session, None, project, {
            "name": "says", "kind": "icontains", "params": {"value": "number 1"}})
        check, check_version = check_config.id, check_first.id
        by_hand = create_scorer(session, None, project, {
            "name": "by hand", "kind": "manual", "params": {"scale": "1-5"}})
        session.commit()
        hand_version = by_hand[1].id
    first = _run(s.project.id, s.dataset_id, s.model_ids[0], (check,))
    execute_run(first)
    with db.factory() as session:
        run = session.get(Run, first)
        assert run is not None and run.status == RunStatus.partial
        failed = run.failed
    assert failed > 0
    found = assert_rollups_exact()
    assert sum(r[2] for r in found["days"]) == 30  # every finished output, failed ones too

    configure(fake, latency_ms=0, jitter_ms=30, fault_rate=0.0)
    with db.factory() as session:
        run = session.get(Run, first)
        assert run is not None
        control.retry_failed(session, None, run)
        session.commit()
        assert sum(r[2] for r in _tables(session)["days"]) == 30 - failed  # reopened: out
    execute_run(first)
    found = assert_rollups_exact()
    assert sum(r[3] for r in found["days"]) == 30  # all succeeded now

    second = _run(s.project.id, s.dataset_id, s.model_ids[0], (check,))
    execute_run(second)
    found = assert_rollups_exact()
    assert {r[5] for r in found["cases"]} == {2}  # each case scored once per run, per model
    assert {r[1] for r in found["cases"]} == {0, check_version}  # per version, and pooled

    with db.factory() as session:
        reviewer = session.get(User, owner.id)
        project = session.get(Project, s.project.id)
        run = session.get(Run, second)
        assert reviewer is not None and project is not None and run is not None
        outputs = list(session.scalars(select(Output.id).where(
            Output.run_id == second, Output.status == CellStatus.succeeded)
            .order_by(Output.id).limit(3)))
        for output_id, rating in zip(outputs, (5, 2, 4), strict=True):
            manual.set_score(session, reviewer, project, run, output_id, hand_version,
                             manual.Entry(rating=rating))
        manual.set_score(session, reviewer, project, run, outputs[1], hand_version,
                         manual.Entry(rating=3))  # changed
        manual.delete_score(session, reviewer, project, run, outputs[2], hand_version)
        session.commit()
    found = assert_rollups_exact()
    by_hand_rows = sorted(r for r in found["cases"] if r[1] == hand_version)
    assert [(r[4], r[5]) for r in by_hand_rows] == [(1.0, 1), (0.5, 1)]  # 5 and 3 on 1-5

    # an instance upgraded with this history gets the same rollups from the migration
    db.scoped.remove()
    db.engine.dispose()
    if db.engine.dialect.name == "postgresql":
        # no warm job of this test's runs reads the tables the downgrade drops: one a live
        # worker held took part in a deadlock with the DROP TABLE
        queue = Queue(settings.runs_queue, connection=redis.Redis.from_url(REDIS_URL))
        queue.empty()
        _settle_warm_jobs(queue)
        end_other_connections(test_env["DATABASE_URL"])
    previous = dict(os.environ)
    os.environ.update(test_env)
    try:
        with app.app_context():
            downgrade(revision=BEFORE_ROLLUPS)
            upgrade()
    finally:
        os.environ.clear()
        os.environ.update(previous)
    assert assert_rollups_exact() == found
