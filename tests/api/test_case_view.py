"""One case of a run for the side-by-side viewer: the case, every target's outputs (each
repeat and turn) with their scores, the neighbours for navigation; trace cases with the
rules scorer's evidence; a case outside the run is a clear 404."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.projects.models import Project
from assay.core.runs.models import Output
from assay.core.runs.planning import RunSpec, plan_run
from assay.core.scoring.models import Score
from assay.core.scoring.service import create_scorer
from assay.extensions import db
from assay.jobs.scoring import score_run
from tests.api.test_run_results import base, failed, get_json, ok
from tests.factories import Factory, Session


@pytest.fixture
def owner(factory: Factory) -> Any:
    return factory.user()


@pytest.fixture
def project(factory: Factory, owner: Any) -> Project:
    return factory.project(owner, "Cases")


@pytest.fixture
def browser(factory: Factory, owner: Any) -> Session:
    return factory.login(owner)


def _output_id(run_id: int, case_id: int, target_id: int, repeat: int = 0) -> int:
    with db.factory() as session:
        found = session.scalar(select(Output.id).where(
            Output.run_id == run_id, Output.case_id == case_id, Output.target_id == target_id,
            Output.repeat == repeat, Output.turn == 0))
        assert found is not None
        return found


def _judge_score(factory: Factory, project: Project, run_id: int, output_id: int) -> int:
    _, version_id = factory.scorer(project, name="Helpfulness")
    with db.factory() as session:
        output = session.get(Output, output_id)
        assert output is not None
        session.add(Score(run_id=run_id, output_id=output_id, target_id=output.target_id,
                          case_id=output.case_id, scorer_version_id=version_id,
                          kind="llm_judge", source="fake-judge", value=0.75, passed=True,
                          rationale="Clear and correct, a little long."))
        session.commit()
    return version_id


def test_a_case_with_every_targets_outputs_scores_and_neighbours(
        factory: Factory, project: Project, owner: Any, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=3, targets=2, repeats=2)
    ok(planned, 1, 0, text="Paris is the capital.", latency_ms=120, tokens_in=11,
       tokens_out=6, cost_micros=9)
    ok(planned, 1, 0, repeat=1, text="It is Paris.")
    failed(planned, 1, 1, "timeout")
    first, middle, last = planned.case_ids
    scored = _output_id(planned.run_id, middle, planned.target_ids[0])
    _judge_score(factory, project, planned.run_id, scored)

    view = get_json(browser, f"{base(project, planned.run_id)}/cases/{middle}")
    assert (view["run_id"], view["run_name"], view["dataset_kind"]) == (
        planned.run_id, "Planned", "questions")
    assert (view["position"], view["total"]) == (2, 3)
    assert (view["previous_case_id"], view["next_case_id"]) == (first, last)
    assert view["case"]["id"] == middle
    assert view["case"]["input"] == {"question": "Question 1?"}
    assert view["case"]["expected"] == {"output": "Answer 1"}
    assert view["case"]["trace"] is None and view["case"]["tags"] == []
    assert [t["target_id"] for t in view["targets"]] == planned.target_ids
    one, two = view["targets"]
    assert [(o["repeat"], o["status"], o["text"]) for o in one["outputs"]] == [
        (0, "succeeded", "Paris is the capital."), (1, "succeeded", "It is Paris.")]
    assert {o["case_id"] for t in view["targets"] for o in t["outputs"]} == {middle}
    cell = one["outputs"][0]
    assert (cell["latency_ms"], cell["tokens_in"], cell["tokens_out"], cell["cost_micros"]) \
        == (120, 11, 6, 9)
    [score] = cell["scores"]
    assert (score["scorer_name"], score["value"], score["rationale"]) == (
        "Helpfulness", 0.75, "Clear and correct, a little long.")
    assert one["outputs"][1]["scores"] == []
    assert [(o["status"], o["error_class"], o["error"]) for o in two["outputs"]] == [
        ("failed", "timeout", "It failed: timeout"), ("pending", None, None)]

    edge = get_json(browser, f"{base(project, planned.run_id)}/cases/{first}")
    assert (edge["position"], edge["previous_case_id"], edge["next_case_id"]) == (
        1, None, middle)
    edge = get_json(browser, f"{base(project, planned.run_id)}/cases/{last}")
    assert (edge["position"], edge["previous_case_id"], edge["next_case_id"]) == (
        3, middle, None)


def test_conversation_turns_are_each_an_output(
        factory: Factory, project: Project, owner: Any, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=1, turns=2)
    view = get_json(browser, f"{base(project, planned.run_id)}/cases/{planned.case_ids[0]}")
    assert [(o["repeat"], o["turn"]) for o in view["targets"][0]["outputs"]] == [(0, 0), (0, 1)]


def test_a_case_outside_the_run_is_a_clear_404(
        factory: Factory, project: Project, owner: Any, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=1)
    other = factory.planned_run(owner, project, cases=1, targets=1)  # another dataset
    url = base(project, planned.run_id)
    for case_id in (other.case_ids[0], 2**31 - 1):
        reply = browser.get(f"{url}/cases/{case_id}")
        assert reply.status_code == 404, reply.json
        assert reply.json["code"] == "NOT_FOUND"
        assert reply.json["message"] == (
            f"Case {case_id} is not in run {planned.run_id}: the run covers the cases of "
            "its dataset version only")
    reply = browser.get(f"{base(project, 2**31 - 1)}/cases/{planned.case_ids[0]}")
    assert reply.status_code == 404 and reply.json["message"] == "Run not found"
    for bad in ("0", "abc", str(2**31)):
        assert browser.get(f"{url}/cases/{bad}").status_code == 404


def test_another_projects_case_is_a_404(factory: Factory, project: Project, owner: Any,
                                        browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=1)
    stranger = factory.user()
    elsewhere = factory.project(stranger, "Elsewhere")
    reply = factory.login(stranger).get(
        f"{base(elsewhere, planned.run_id)}/cases/{planned.case_ids[0]}")
    assert reply.status_code == 404
    reply = factory.login(stranger).get(
        f"{base(project, planned.run_id)}/cases/{planned.case_ids[0]}")
    assert reply.status_code == 404 and "Tenant" not in reply.get_data(as_text=True)


RULES = """rules:
  - id: must_look_up
    when: agent_says("refunded")
    require: tool_called("lookup")
    severity: high
  - id: no_promises
    when: agent_says("promise")
    action: fail
    severity: low
"""


def test_a_trace_case_carries_its_trace_and_the_rules_evidence(
        factory: Factory, project: Project, owner: Any, browser: Session) -> None:
    messages = [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "Refund my order"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "name": "search", "arguments": "{\"q\": \"order\"}"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "order 7: shipped"},
        {"role": "assistant", "content": "I promise it is refunded."}]
    with db.factory() as session:
        found = session.merge(project)
        dataset = create_dataset(session, None, found, "traces", "traces",
                                 [{"trace": {"messages": messages}}])
        scorer, _ = create_scorer(session, None, found,
                                  {"name": "Policy", "kind": "rules", "params": {"yaml": RULES}})
        run = plan_run(session, None, found, RunSpec(dataset_id=dataset.id,
                                                     scorer_ids=(scorer.id,)))
        session.commit()
        run_id = run.id
        case_id = version_cases(session, latest_version(session, dataset.id).id)[0].id
    assert score_run(run_id) == 1

    view = get_json(browser, f"{base(project, run_id)}/cases/{case_id}")
    assert view["dataset_kind"] == "traces"
    assert view["case"]["trace"] == {"messages": messages}
    [target] = view["targets"]
    assert target["model_id"] is None
    [output] = target["outputs"]
    assert output["conversation"] is None  # the trace is the case's
    [score] = output["scores"]
    assert (score["kind"], score["passed"], score["severity"]) == ("rules", False, "high")
    assert [(e["message_index"], e["label"], e["text"]) for e in score["evidence"]] == [
        (4, "must_look_up", "refunded"), (4, "no_promises", "promise")]
    rules = {r["id"]: r for r in score["details"]["rules"]}
    assert rules["must_look_up"]["severity"] == "high"
    assert "lookup was never called" in rules["must_look_up"]["message"]


def test_evidence_on_a_model_output_comes_with_the_conversation_it_indexes(
        factory: Factory, project: Project, owner: Any, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=2)
    sent = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Question 0?"}]
    ok(planned, 0, 0, text="I promise it is 4.", raw_request={"model": "fake-fast",
                                                             "messages": sent})
    ok(planned, 0, 1, text="4.")
    [case_id] = planned.case_ids
    flagged = _output_id(planned.run_id, case_id, planned.target_ids[0])
    _, version_id = factory.scorer(project, name="Policy")
    with db.factory() as session:
        session.add(Score(run_id=planned.run_id, output_id=flagged,
                          target_id=planned.target_ids[0], case_id=case_id,
                          scorer_version_id=version_id, kind="rules", value=0.0, passed=False,
                          severity="low", evidence=[{"message_index": 2, "start": 2, "end": 9,
                                                     "text": "promise", "label": "no_promises"}]))
        session.commit()
    view = get_json(browser, f"{base(project, planned.run_id)}/cases/{case_id}")
    one, two = (t["outputs"][0] for t in view["targets"])
    assert one["conversation"] == [*sent, {"role": "assistant", "content": "I promise it is 4."}]
    assert two["conversation"] is None  # no score points at a message
