"""The cost report's total is every micro-dollar the project recorded: the models' calls
and their judges in a scored run, the judges of a judge-mode run, and a generation job.
It equals the project's spend counter, the runs' counters plus the job's cost, and each of
its breakdowns (by kind, model, run, day) adds up to it. Before the report read judges and
generation, it showed the model calls alone."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from assay.core.generation import store
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.reports.costs import cost_report
from assay.core.reports.scope import ReportFilter
from assay.core.runs.models import Run
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.judge_mode import JudgingSpec, start_judging
from assay.core.scoring.service import create_scorer
from assay.extensions import db
from assay.jobs.generation import execute_generation
from assay.jobs.runs import execute_run
from assay.jobs.scoring import score_run
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, fake, setup  # noqa: F401
from tests.engine.test_rollups import assert_rollups_exact
from tests.factories import Factory

RUBRIC = {"criteria": [
    {"name": "Accuracy", "description": "The answer is right.", "weight": 0.5, "scale": "1-5"},
    {"name": "Clarity", "description": "The answer is clear.", "weight": 0.5, "scale": "1-5"}]}
VERDICT = json.dumps({"criteria": {"Accuracy": {"score": 4, "rationale": "Fine."},
                                   "Clarity": {"score": 5, "rationale": "Fine."}},
                      "summary": "Good.", "confidence": 0.8})
RATING = json.dumps({"criteria": {"clarity": {"score": 8, "rationale": "Clear."}},
                     "summary": "Clear."})
QUESTIONS = json.dumps([{"question": f"Which river is number {i}?", "answer": str(i)}
                        for i in range(3)])


def _models(project_id: int) -> dict[str, int]:
    """A judge and a question writer beside the setup's model, all priced."""
    with db.factory() as session:
        credential = session.scalar(select(Credential).where(
            Credential.project_id == project_id))
        assert credential is not None
        made = {name: ModelConfig(project_id=project_id, credential_id=credential.id,
                                  name=name, model=model, input_price_per_mtok_micros=200_000,
                                  output_price_per_mtok_micros=800_000,
                                  params={"max_tokens": 2000})
                for name, model in (("Judge", "fake-judge"), ("Writer", "fake-writer"))}
        session.add_all(made.values())
        session.commit()
        return {name: m.id for name, m in made.items()}


def _counters(project_id: int) -> tuple[int, list[Run]]:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        runs = list(session.scalars(select(Run).where(Run.project_id == project_id)))
        return project.spent_micros, runs


def _report(project_id: int, **filters: Any) -> dict[str, Any]:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        return cost_report(session, project, ReportFilter(**filters))


def test_the_cost_report_total_is_every_recorded_spend(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=[
        {"model": "fake-judge", "pattern": "Rate the question|clarity", "reply": RATING},
        {"model": "fake-judge", "pattern": "", "reply": VERDICT},
        {"model": "fake-writer", "pattern": "", "reply": QUESTIONS}])
    owner = factory.user()
    s = setup(factory, settings, fake, cases=4, owner=owner)
    models = _models(s.project.id)
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        judge = create_scorer(session, None, project, {
            "name": "judge", "kind": "llm_judge",
            "params": {"rubric": RUBRIC, "judges": ["Judge"]}})[0].id
        scored = plan_run(session, None, project, RunSpec(
            dataset_id=s.dataset_id, targets=(TargetSpec(s.model_ids[0]),),
            scorer_ids=(judge,), cache=False)).id
        judged = start_judging(session, None, project, s.dataset_id, JudgingSpec(
            judges=(models["Judge"],), criteria=("clarity",))).id
        session.commit()
    execute_run(scored)
    assert score_run(judged) == 4

    client = factory.login(owner)
    started = client.post(f"/api/projects/{s.project.id}/generation/questions", json={
        "model_id": models["Writer"], "count": 3, "topic": "rivers"})
    assert started.status_code == 202, started.json
    job_id = started.json["id"]
    execute_generation(job_id)
    rt = current()
    job = store.load(rt.redis, settings.redis_prefix, job_id)
    assert job is not None and job["status"] == store.SUCCEEDED and job["cost_micros"] > 0

    project_spent, runs = _counters(s.project.id)
    by_id = {r.id: r for r in runs}
    calls = sum(r.spent_micros - r.judge_spent_micros for r in runs)
    assert by_id[scored].judge_spent_micros > 0 and by_id[judged].judge_spent_micros > 0
    assert project_spent == sum(r.spent_micros for r in runs) + job["cost_micros"]

    report = _report(s.project.id)
    total = report["total"]
    assert total["spent_micros"] == project_spent
    assert {k["kind"]: k["spent_micros"] for k in total["by_kind"]} == {
        "model_calls": calls, "judges": by_id[scored].judge_spent_micros,
        "judge_mode": by_id[judged].judge_spent_micros, "generation": job["cost_micros"],
        "pairwise_targets": 0, "pairwise_runs": 0, "scorer_trials": 0, "critique": 0,
        "assist": 0, "refinement": 0, "pairwise_judge": 0, "arena_judge": 0,
        "connection_test": 0}
    assert (total["calls_micros"], total["generation_micros"]) == (calls, job["cost_micros"])
    for rows in (report["by_model"], report["by_day"]):
        assert sum(r["spent_micros"] for r in rows) == project_spent
    assert {r["run_id"]: r["spent_micros"] for r in report["by_run"]} == {
        r.id: r.spent_micros for r in runs}
    assert [r["run_id"] for r in report["by_run"]] == [judged, scored]  # newest first
    writer = next(m for m in report["by_model"] if m["model_id"] == models["Writer"])
    assert writer["generation_micros"] == job["cost_micros"] == writer["spent_micros"]
    # on one dataset: its runs only (a generation job belongs to no run)
    on_dataset = _report(s.project.id, dataset_id=s.dataset_id)["total"]
    assert on_dataset["spent_micros"] == sum(r.spent_micros for r in runs)
    assert_rollups_exact()
