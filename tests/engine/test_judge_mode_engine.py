"""Judge mode through the engine: the judge-mode run's outputs are the dataset's questions,
and the scoring job asks each judge model (the fake provider, scripted replies) about each
question; a reply that is not the JSON asked for is a failed rating, not a lost one."""

from __future__ import annotations

import json

from sqlalchemy import select

from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.runs.models import Output, Run, RunStatus, RunTarget
from assay.core.scoring.judge_mode import JudgingSpec, start_judging
from assay.core.scoring.judgments import judgments
from assay.core.scoring.models import Score
from assay.extensions import db
from assay.jobs.scoring import score_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, fake, setup  # noqa: F401
from tests.factories import Factory


def _reply(clarity: int, relevance: int, summary: str) -> str:
    return json.dumps({"criteria": {
        "clarity": {"score": clarity, "rationale": f"Clarity {clarity}."},
        "relevance": {"score": relevance, "rationale": f"Relevance {relevance}."}},
        "summary": summary})


def _judges(project_id: int) -> list[int]:
    with db.factory() as session:
        credential = session.scalar(select(Credential).where(
            Credential.project_id == project_id))
        assert credential is not None
        models = [ModelConfig(project_id=project_id, credential_id=credential.id, name=name,
                              model=model, input_price_per_mtok_micros=100_000,
                              output_price_per_mtok_micros=100_000,
                              params={"max_tokens": 2000})
                  for name, model in (("Judge A", "fake-judge-a"), ("Judge B", "fake-judge-b"))]
        session.add_all(models)
        session.commit()
        return [m.id for m in models]


def test_the_scoring_job_rates_every_question_with_every_judge(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=[
        {"model": "fake-judge-a", "pattern": "question number 1 ", "reply": "Nice question!"},
        {"model": "fake-judge-a", "pattern": "", "reply": _reply(9, 7, "Crisp.")},
        {"model": "fake-judge-b", "pattern": "", "reply": _reply(6, 7, "Fine.")}])
    s = setup(factory, settings, fake, cases=3)
    judge_a, judge_b = _judges(s.project.id)
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        run = start_judging(session, None, project, s.dataset_id, JudgingSpec(
            judges=(judge_a, judge_b), criteria=("clarity", "relevance")))
        session.commit()
        run_id = run.id
        target = session.scalar(select(RunTarget).where(RunTarget.run_id == run_id))
        assert target is not None and target.model_id is None
        assert target.label == "Dataset questions"
        found = session.get(Run, run_id)
        assert found is not None and found.status == RunStatus.completed
        assert (found.total, found.succeeded, found.spent_micros) == (3, 3, 0)
        texts = list(session.scalars(select(Output.text).where(Output.run_id == run_id)
                                     .order_by(Output.id)))
    assert texts == [f"question number {i} about things" for i in range(3)]

    assert score_run(run_id) == 6  # 3 questions x 2 judges
    assert score_run(run_id) == 0  # nothing scored twice
    with db.factory() as session:
        sources = sorted({s for s in session.scalars(select(Score.source).where(
            Score.run_id == run_id))})
        project = session.get(Project, s.project.id)
        run_row = session.get(Run, run_id)
        assert project is not None and run_row is not None
        result = judgments(session, project, run_row, 1, 20)
    assert sources == sorted([str(judge_a), str(judge_b)])  # judges recorded by model id
    assert result["progress"] == {"questions": 3, "expected": 6, "scored": 5, "failed": 1,
                                  "done": True}
    assert [j["name"] for j in result["judges"]] == ["Judge A", "Judge B"]
    assert result["judges"][0]["cost_micros"] > 0  # the judges' usage, priced
    first, second, third = result["items"]
    for item in (first, third):
        a, b = item["ratings"]
        assert (a["status"], a["scores"], a["overall"], a["justification"]) == \
            ("scored", {"clarity": 9.0, "relevance": 7.0}, 8.0, "Crisp.")
        assert a["rationales"] == {"clarity": "Clarity 9.", "relevance": "Relevance 7."}
        assert (b["scores"], b["overall"]) == ({"clarity": 6.0, "relevance": 7.0}, 6.5)
    failed, rated = second["ratings"]
    assert failed["status"] == "failed" and failed["scores"] == {}
    assert "reply rejected" in failed["error"] and rated["status"] == "scored"
    by_criterion = {a["criterion"]: a for a in result["agreement"]}
    assert by_criterion["clarity"]["n_units"] == 2  # the failed rating is missing, not 0
    assert by_criterion["relevance"]["alpha"] is None  # every rating equal: no variation
