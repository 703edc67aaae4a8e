"""Scorers added to a finished run, end to end: API -> RQ -> a real worker process -> LLM
judges on the fake provider (scripted verdicts) -> scores and the judges' spend settled ->
the job's progress on the run's stream. And two scoring jobs of one run at once (two
attaches in quick succession) never write a score twice: one waits for the other."""

from __future__ import annotations

import json
import subprocess
import threading
from typing import Any

import httpx
from sqlalchemy import func, select

from assay.core.projects.models import Project
from assay.core.runs.models import CellStatus, Output, Run
from assay.core.scoring.attach import attach_scorers
from assay.core.scoring.models import Score
from assay.extensions import db
from assay.jobs.scoring import score_run
from assay.providers.fake import FakeProviderThread
from tests.engine.test_demo_run import read_events
from tests.engine.test_providers_engine import configure, fake  # noqa: F401
from tests.factories import Factory

RUBRIC = {"criteria": [
    {"name": "Accuracy", "description": "The answer is factually right.", "weight": 0.5,
     "scale": "1-5"},
    {"name": "Clarity", "description": "The answer is easy to follow.", "weight": 0.5,
     "scale": "1-5"}]}
VERDICT = json.dumps({"criteria": {
    "Accuracy": {"score": 4, "rationale": "Accurate."},
    "Clarity": {"score": 5, "rationale": "Clear."}}, "summary": "Solid.", "confidence": 0.8})


def _scorer(factory: Factory, project: Project, name: str, kind: str,
            params: dict[str, Any]) -> int:
    return factory.scorer(project, name, kind, params)[1]


def _books(run_id: int) -> dict[str, Any]:
    with db.factory() as session:
        run = session.get(Run, run_id)
        assert run is not None
        costs = [details.get("usage", {}).get("cost_micros") or 0 for details in
                 session.scalars(select(Score.details).where(Score.run_id == run_id))]
        outputs = session.scalar(select(func.count()).select_from(Output).where(
            Output.run_id == run_id, Output.status == CellStatus.succeeded))
        return {"judge_spent": run.judge_spent_micros, "reserved": run.reserved_micros,
                "held": run.scoring_reserved_micros, "costs": sum(costs),
                "outputs": outputs}


def test_a_worker_scores_a_finished_run_with_added_judges_and_settles_their_cost(
        factory: Factory, live_url: str, worker: subprocess.Popen[bytes],
        fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=[
        {"model": "fake-fast", "pattern": "factually right", "reply": VERDICT}])
    owner = factory.user()
    project = factory.project(owner, "Scored later")
    run_id = factory.finished_run(owner, project, execute=True)  # 12 cases x 2 models
    judge = _scorer(factory, project, "Judge", "llm_judge",
                    {"judges": ["Fake Fast"], "rubric": RUBRIC})
    check = _scorer(factory, project, "Says", "icontains", {"value": "says"})
    token = factory.api_token(owner)
    base = f"{live_url}/api/projects/{project.id}/runs/{run_id}/scorers"
    headers = {"Authorization": f"Bearer {token}"}

    estimate = httpx.post(f"{base}/estimate", headers=headers,
                          json={"scorer_version_ids": [judge, check]})
    assert estimate.status_code == 200, estimate.text
    assert (estimate.json()["scores"], estimate.json()["judge_calls"]) == (48, 24)
    started = httpx.post(base, headers=headers, json={"scorer_version_ids": [judge, check]})
    assert started.status_code == 202, started.text

    events = read_events(f"{base}/events?last_event_id={started.json()['events_after']}",
                         token)
    assert [kind for _, kind, _ in events][-1] == "run.scoring_finished"
    assert events[-1][2]["scores"] == 48 and "stopped" not in events[-1][2]
    with db.factory() as session:
        values = session.execute(select(Score.scorer_version_id, Score.value, Score.error)
                                 .where(Score.run_id == run_id)).all()
    assert len(values) == 48
    assert {(v, value, error) for v, value, error in values if v == judge} == \
        {(judge, 0.875, None)}  # (0.75 + 1.0) / 2 on every output
    books = _books(run_id)
    assert books["judge_spent"] == books["costs"] > 0  # what each verdict cost, settled
    assert books["reserved"] == books["held"] == 0  # nothing left held


def test_two_scoring_jobs_of_a_run_at_once_write_each_score_once(
        factory: Factory, fake: FakeProviderThread) -> None:  # noqa: F811
    owner = factory.user()
    project = factory.project(owner, "Twice")
    run_id = factory.finished_run(owner, project, execute=True)
    version = _scorer(factory, project, "Says", "icontains", {"value": "says"})
    with db.factory() as session:
        found, run = session.get(Project, project.id), session.get(Run, run_id)
        assert found is not None and run is not None
        attach_scorers(session, None, found, run, [version])
        session.commit()
    written: list[int] = []
    errors: list[BaseException] = []

    def job() -> None:
        try:
            written.append(score_run(run_id))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=job) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and sorted(written) == [0, 24]  # the second found nothing left
    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(Score).where(
            Score.run_id == run_id)) == 24
