"""Scores land with their outputs: a run's scorers (a reference check, the rules DSL and
an LLM judge on the fake provider's scripted replies) score each reply inside the shard and
are written in the transaction that records it; a trace run's recorded outputs are scored
by the scoring job."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from assay.core.datasets.service import create_dataset
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.runs.models import Output, Run, RunStatus
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.models import Score
from assay.core.scoring.service import create_scorer
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.jobs.scoring import score_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, fake, setup  # noqa: F401
from tests.engine.test_rollups import assert_rollups_exact
from tests.factories import Factory

RUBRIC = {"criteria": [
    {"name": "Accuracy", "description": "The answer is factually right.", "weight": 0.5,
     "scale": "1-5"},
    {"name": "Clarity", "description": "The answer is easy to follow.", "weight": 0.5,
     "scale": "1-5"}]}
RULES = """rules:
  - id: must_look_up
    when: agent_says("says")
    require: tool_called("lookup")
    severity: high
"""


def _verdict(accuracy: int, clarity: int, **extra: Any) -> str:
    return json.dumps({"criteria": {
        "Accuracy": {"score": accuracy, "rationale": "Accuracy is fine."},
        "Clarity": {"score": clarity, "rationale": "Clarity is fine."}},
        "summary": "Solid.", "confidence": 0.8, **extra})


def _judge_model(project_id: int, fake_url: str) -> str:
    with db.factory() as session:
        credential = session.scalar(select(Credential).where(
            Credential.project_id == project_id))
        assert credential is not None
        session.add(ModelConfig(project_id=project_id, credential_id=credential.id,
                                name="Judge", model="fake-judge",
                                input_price_per_mtok_micros=100_000,
                                output_price_per_mtok_micros=100_000,
                                params={"max_tokens": 2000}))
        session.commit()
    return "Judge"


def _scorers(project_id: int, judge: str) -> list[int]:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        ids = [create_scorer(session, None, project, data)[0].id for data in (
            {"name": "says", "kind": "icontains", "params": {"value": "SAYS"}},
            {"name": "rules", "kind": "rules", "params": {"yaml": RULES}},
            {"name": "judge", "kind": "llm_judge",
             "params": {"rubric": RUBRIC, "judges": [judge]}})]
        session.commit()
    return ids


def _scores(run_id: int) -> dict[int, dict[str, Score]]:
    with db.factory() as session:
        rows = session.scalars(select(Score).where(Score.run_id == run_id)).all()
    out: dict[int, dict[str, Score]] = {}
    for row in rows:
        out.setdefault(row.output_id, {})[row.kind] = row
    return out


def test_each_reply_is_scored_by_every_scorer_as_it_lands(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=[
        {"model": "fake-judge", "pattern": "question 1\\b", "reply": "not json at all"},
        {"model": "fake-judge", "pattern": "", "reply": _verdict(4, 5)}])
    s = setup(factory, settings, fake, cases=4)
    judge = _judge_model(s.project.id, fake.url)
    scorer_ids = _scorers(s.project.id, judge)
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        run = plan_run(session, None, project, RunSpec(
            dataset_id=s.dataset_id, targets=(TargetSpec(s.model_ids[0]),),
            scorer_ids=tuple(scorer_ids), cache=False))
        session.commit()
        run_id = run.id
    execute_run(run_id)
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None and found.status == RunStatus.completed
        outputs = session.execute(select(Output.id, Output.text).where(
            Output.run_id == run_id)).all()
    scores = _scores(run_id)
    assert set(scores) == {oid for oid, _ in outputs}
    for oid, text in outputs:
        by_kind = scores[oid]
        assert set(by_kind) == {"icontains", "rules", "llm_judge"}
        assert by_kind["icontains"].value == 1.0 and by_kind["icontains"].passed is True
        rules = by_kind["rules"]
        assert rules.passed is False and rules.severity == "high"
        assert rules.evidence and rules.evidence[0]["message_index"] == 1  # the reply
        verdict = by_kind["llm_judge"]
        assert verdict.source == "Judge"
        if "question 1 " in f"{text} ":
            assert verdict.value is None and verdict.error  # invalid JSON: a failed score
            assert "not json" in json.dumps(verdict.details)
        else:
            assert verdict.error is None
            assert verdict.value == 0.875  # (0.75 + 1.0) / 2
            assert verdict.criteria == {"Accuracy": 0.75, "Clarity": 1.0}


def test_a_trace_run_is_scored_by_the_scoring_job(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    s = setup(factory, settings, fake, cases=1)
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        dataset = create_dataset(session, None, project, "traces", "traces", [
            {"trace": {"messages": [
                {"role": "user", "content": "Refund my order"},
                {"role": "assistant", "content": "Done, it says refunded.",
                 "tool_calls": [{"name": "lookup", "arguments": "{}"}]}]}},
            {"trace": {"messages": [
                {"role": "user", "content": "Refund my order"},
                {"role": "assistant", "content": "It says refunded."}]}}])
        scorer, _ = create_scorer(session, None, project,
                                  {"name": "rules", "kind": "rules", "params": {"yaml": RULES}})
        run = plan_run(session, None, project, RunSpec(dataset_id=dataset.id,
                                                       scorer_ids=(scorer.id,)))
        session.commit()
        run_id = run.id
    assert score_run(run_id) == 2
    assert score_run(run_id) == 0  # nothing scored twice
    verdicts = sorted(next(iter(s.values())).passed for s in _scores(run_id).values())
    assert verdicts == [False, True]
    assert len(assert_rollups_exact()["cases"]) == 2 * 2  # the job's scores, per version and pooled


RAG = {"groundedness": 5, "relevance": 4, "coherence": 5, "fluency": 3}
VERDICT = {"pass": False, "severity": "high", "cluster": "unverified",
           "reason": "The reply claims what it never checked.",
           "evidence": [{"idx": 1, "label": "Claim", "detail": "says"}]}


def _judge(project_id: int, name: str, model: str) -> None:
    with db.factory() as session:
        credential = session.scalar(select(Credential).where(
            Credential.project_id == project_id))
        assert credential is not None
        session.add(ModelConfig(project_id=project_id, credential_id=credential.id, name=name,
                                model=model, params={"max_tokens": 2000}))
        session.commit()


def test_every_automatic_kind_scores_through_a_real_run(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    """Each kind of the registry that scores on its own (people score `manual`; pairwise
    judges compare two targets) scores the fake provider's replies through the shard."""
    configure(fake, latency_ms=0, scripts=[
        {"model": "fake-rag", "pattern": "", "reply": json.dumps({"criteria": {
            k: {"score": v, "rationale": f"{k} is fine."} for k, v in RAG.items()},
            "summary": "Fine."})},
        {"model": "fake-verdict", "pattern": "", "reply": json.dumps(VERDICT)}])
    s = setup(factory, settings, fake, cases=2)
    _judge(s.project.id, "Rag judge", "fake-rag")
    _judge(s.project.id, "Verdict judge", "fake-verdict")
    kinds: dict[str, dict[str, Any]] = {
        "equals": {"value": "nope"}, "contains": {"value": "says"},
        "contains_all": {"values": ["says", "question"]},
        "contains_any": {"values": ["nope", "says"]}, "regex": {"pattern": r"question \d"},
        "starts_with": {"value": "fake"}, "is_json": {}, "json_schema": {"schema": {}},
        "key_points": {"points": ["question"]}, "must_include": {"terms": ["says"]},
        "must_not_include": {"terms": ["password"]}, "length": {"max": 200},
        "latency": {"max_ms": 60_000}, "cost": {"max_micros": 1_000_000},
        "similarity": {"value": "fake-fast says: question 0"},
        "safety": {"checks": ["pii", "jailbreak"], "action": "block"},
        "rules": {"yaml": RULES},
        "code_execution": {"tests": [{"call": "f(1)", "expected": 2}]},
        "rag_metrics": {"judges": ["Rag judge"]},
        "verdict_judge": {"rubric": "Fail a reply that claims what it never checked.",
                          "judges": ["Verdict judge"]}}
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        project.settings = {**(project.settings or {}), "code_execution": True}
        dataset = create_dataset(session, None, project, "grounded", "questions", [
            {"input": {"question": f"question {i}"},
             "expected": {"context": "Questions are numbered from zero."}} for i in range(2)])
        ids = [create_scorer(session, None, project, {"name": kind, "kind": kind,
                                                      "params": params})[0].id
               for kind, params in kinds.items()]
        run = plan_run(session, None, project, RunSpec(
            dataset_id=dataset.id, targets=(TargetSpec(s.model_ids[0]),),
            scorer_ids=tuple(ids), cache=False))
        session.commit()
        run_id = run.id
    execute_run(run_id)
    scores = _scores(run_id)
    assert len(scores) == 2
    for by_kind in scores.values():
        assert set(by_kind) == set(kinds)
        failed = {kind: row.error for kind, row in by_kind.items() if row.value is None}
        assert failed == {}  # every kind produced a value, none an error
        assert by_kind["equals"].passed is False and by_kind["contains"].passed is True
        assert by_kind["is_json"].passed is False and by_kind["safety"].passed is True
        assert by_kind["code_execution"].value == 0.0  # a reply that is no code fails its test
        assert by_kind["rag_metrics"].criteria["groundedness"] == 1.0
        assert by_kind["verdict_judge"].passed is False
        assert by_kind["verdict_judge"].evidence[0]["message_index"] == 1
