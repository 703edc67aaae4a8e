"""What the scorer editor needs from the API: each kind's params JSON Schema (agreeing with
the server's own validation), rules problems with line and column, the judge prompt
preview, and "try on one output" (a real judge call, no score recorded, cost charged)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema_rs
import pytest
from sqlalchemy import func, select

from assay.core.errors import Invalid
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import AuditEvent, Project, Role
from assay.core.scoring.models import Score
from assay.core.scoring.service import check_params
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.scorers import sandbox
from tests.factories import Factory, Session, first_output, succeed

RUBRIC = {"criteria": [
    {"name": "Accuracy", "description": "The answer is factually right.", "weight": 0.6,
     "scale": "1-5"},
    {"name": "Clarity", "description": "The answer is easy to follow.", "weight": 0.4,
     "scale": "0-10"}]}
RULES = 'rules:\n  - id: no_refunds\n    when: agent_says("refund")\n    action: fail\n' \
        '    severity: high\n'
JUDGE_MODEL = "fake-trial-judge"
VERDICT = {"criteria": {"Accuracy": {"score": 4, "rationale": "Right."},
                        "Clarity": {"score": 10, "rationale": "Clear."}},
           "summary": "Good.", "confidence": 0.75}

# A valid example of every kind: each must pass both the served schema and the server.
VALID: dict[str, dict[str, Any]] = {
    "code_execution": {"language": "python", "entrypoint": "add", "must_compile": True,
                       "tests": [{"call": "add(1, 2)", "expected": 3}]},
    "contains": {"value": "Paris"}, "icontains": {"value": "paris"},
    "contains_all": {"values": ["a", "b"]}, "contains_any": {"values": ["a", "b"]},
    "cost": {"max_micros": 1000}, "equals": {"value": "yes"}, "is_json": {},
    "json_schema": {"schema": {"type": "object"}},
    "key_points": {"points": ["capital", "France"]},
    "latency": {"max_ms": 2000}, "length": {"max": 100},
    "llm_judge": {"rubric": RUBRIC, "judges": ["Judge"], "pass_threshold": 0.7},
    "manual": {"scale": "criteria", "criteria": ["accuracy", "tone"]},
    "must_include": {"terms": ["refund"]}, "must_not_include": {"terms": ["guarantee"]},
    "pairwise_judge": {"judges": ["Judge"]},
    "question_quality": {"judges": ["Judge"], "criteria": ["clarity"]},
    "rag_metrics": {"judges": ["Judge"]}, "regex": {"pattern": "^Paris"},
    "rules": {"yaml": RULES}, "safety": {}, "similarity": {"threshold": 0.5},
    "starts_with": {"value": "Yes"},
    "verdict_judge": {"rubric": "Fail a reply that claims what it never checked.",
                      "judges": ["Judge"]},
}
# Invalid params each kind's schema and the server must both refuse.
INVALID: list[tuple[str, dict[str, Any]]] = [
    ("contains", {}), ("contains", {"value": 3}), ("contains", {"value": "a", "x": 1}),
    ("cost", {"max_micros": "lots"}),
    ("code_execution", {"language": "javascript"}),
    ("code_execution", {"must_compile": "yes"}),
    ("llm_judge", {"rubric": RUBRIC, "judges": []}),
    ("llm_judge", {"rubric": RUBRIC, "judges": ["a", "b", "c", "d", "e", "f"]}),
    ("llm_judge", {"rubric": {"criteria": RUBRIC["criteria"][:1]}, "judges": ["Judge"]}),
    ("llm_judge", {"rubric": RUBRIC, "judges": ["Judge"], "pass_threshold": 2}),
    ("manual", {"scale": "1-7"}), ("manual", {"scale": "criteria"}),
    ("manual", {"scale": "1-5", "criteria": ["x"]}),
    ("rules", {}), ("rules", {"yaml": 5}),
    ("regex", {"pattern": ""}), ("safety", {"unknown": True}),
    ("rag_metrics", {"judges": "Judge"}),
    ("question_quality", {"judges": ["Judge"]}),
    ("question_quality", {"judges": ["Judge"], "criteria": [], "instruction": "  "}),
]


@pytest.fixture
def owner(factory: Factory) -> tuple[Session, int]:
    user = factory.user()
    project = factory.project(user, "Editor")
    return factory.login(user), project.id


def _kinds(browser: Session, project_id: int | None = None) -> dict[str, dict[str, Any]]:
    query = f"?project_id={project_id}" if project_id else ""
    reply = browser.get(f"/api/scorer-kinds{query}")
    assert reply.status_code == 200, reply.json
    return {k["kind"]: k for k in reply.json}


def _server_accepts(kind: str, params: dict[str, Any]) -> bool:
    try:
        check_params(kind, params)
    except Invalid:  # a crash is no refusal: it fails the test
        return False
    return True


def test_every_kind_serves_a_schema_its_valid_example_meets(owner: tuple[Session, int]) -> None:
    kinds = _kinds(owner[0])
    assert set(kinds) == set(VALID), "give every kind a valid example"
    for kind, info in kinds.items():
        schema = info["params_schema"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False, kind
        assert jsonschema_rs.validator_for(schema).is_valid(VALID[kind]), kind
        assert _server_accepts(kind, VALID[kind]), kind
    assert kinds["llm_judge"]["calls_judges"] and not kinds["regex"]["calls_judges"]


@pytest.mark.parametrize(("kind", "params"), INVALID)
def test_schema_and_server_refuse_the_same_bad_params(owner: tuple[Session, int], kind: str,
                                                      params: dict[str, Any]) -> None:
    schema = _kinds(owner[0])[kind]["params_schema"]
    assert not jsonschema_rs.validator_for(schema).is_valid(params)
    assert not _server_accepts(kind, params)
    reply = owner[0].post(f"/api/projects/{owner[1]}/scorers",
                          json={"name": "Bad", "kind": kind, "params": params})
    assert reply.status_code == 422 and reply.json["errors"]["json"], reply.json


def test_code_execution_is_unavailable_until_the_project_opts_in(
        owner: tuple[Session, int]) -> None:
    browser, pid = owner
    assert _kinds(browser)["code_execution"]["available"] is True  # no project asked about
    off = _kinds(browser, pid)["code_execution"]
    assert off["available"] is False and "code execution" in off["unavailable_reason"]
    with db.factory() as session:
        project = session.get(Project, pid)
        assert project is not None
        project.settings = {"code_execution": True}
        session.commit()
    on = _kinds(browser, pid)["code_execution"]
    assert on["available"] is True and on["unavailable_reason"] is None
    assert browser.get("/api/scorer-kinds?project_id=999999").status_code == 404


def test_code_execution_is_unavailable_on_a_host_without_isolation(
        owner: tuple[Session, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """A project that opted in still cannot pick a kind whose every output would fail:
    with no bubblewrap and no Landlock the sandbox refuses, and the list says why."""
    browser, pid = owner
    with db.factory() as session:
        project = session.get(Project, pid)
        assert project is not None
        project.settings = {"code_execution": True}
        session.commit()

    def no_isolation() -> str:
        raise sandbox.SandboxError("Code execution is unavailable: install bubblewrap")

    monkeypatch.setattr(sandbox, "isolation", no_isolation)
    kind = _kinds(browser, pid)["code_execution"]
    assert kind["available"] is False and "install bubblewrap" in kind["unavailable_reason"]


def test_rules_problems_come_with_line_and_column(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    bad = RULES.replace("severity: high", "severity: huge")
    reply = browser.post(f"/api/projects/{pid}/scorers",
                         json={"name": "Rules", "kind": "rules", "params": {"yaml": bad}})
    assert reply.status_code == 422
    problems = reply.json["errors"]["positions"]["params.yaml"]
    assert problems[0]["line"] == 5 and problems[0]["column"] == 15
    assert "huge" in problems[0]["message"]
    assert reply.json["errors"]["json"]["params.yaml"][0].startswith("line 5, column 15:")


def test_preview_renders_the_prompt_the_scorer_sends(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    reply = browser.post(f"/api/projects/{pid}/scorers/preview", json={
        "kind": "llm_judge", "params": VALID["llm_judge"],
        "sample": {"output": "Paris is the capital.", "input": {"question": "Capital?"},
                   "reference": "Paris"}})
    assert reply.status_code == 200, reply.json
    assert reply.json["judges"] == ["Judge"]
    roles = [m["role"] for m in reply.json["messages"]]
    assert roles == ["system", "user"]
    task = reply.json["messages"][1]["content"]
    for text in ("Paris is the capital.", "Capital?", "Accuracy", "Clarity", "0-10"):
        assert text in task
    pair = browser.post(f"/api/projects/{pid}/scorers/preview", json={
        "kind": "pairwise_judge", "params": VALID["pairwise_judge"],
        "sample": {"output": "First answer"}, "second": {"output": "Second answer"}})
    assert pair.status_code == 200
    content = pair.json["messages"][1]["content"]
    assert content.index("First answer") < content.index("Second answer")
    none = browser.post(f"/api/projects/{pid}/scorers/preview", json={
        "kind": "regex", "params": {"pattern": "x"}, "sample": {"output": "x"}})
    assert none.status_code == 422 and "kind" in none.json["errors"]["json"]
    bad = browser.post(f"/api/projects/{pid}/scorers/preview", json={
        "kind": "llm_judge", "params": {"judges": ["Judge"]}, "sample": {"output": "x"}})
    assert bad.status_code == 422 and "params.rubric" in bad.json["errors"]["json"]


def _judge(project_id: int, fake_url: str) -> None:
    """A priced judge model "Judge" whose replies on the shared fake provider (for its own
    model id only) are a valid rubric verdict."""
    with db.factory() as session:
        credential = Credential(project_id=project_id, kind="fake", label="Fake account",
                                base_url=fake_url, secret_env=None, config={})
        session.add(credential)
        session.flush()
        session.add(ModelConfig(project_id=project_id, credential_id=credential.id,
                                name="Judge", model=JUDGE_MODEL, params={"max_tokens": 500},
                                input_price_per_mtok_micros=1_000_000,
                                output_price_per_mtok_micros=2_000_000))
        session.commit()
    config = httpx.get(f"{fake_url}/_fake/config").json()
    if not any(s.get("model") == JUDGE_MODEL for s in config["scripts"]):
        scripts = [*config["scripts"], {"model": JUDGE_MODEL, "pattern": "",
                                        "reply": json.dumps(VERDICT)}]
        httpx.post(f"{fake_url}/_fake/config", json={"scripts": scripts}).raise_for_status()


def _spent(project_id: int) -> int:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        return project.spent_micros


def test_try_scores_one_output_charges_the_project_and_records_no_score(
        factory: Factory, fake_provider: FakeProviderThread) -> None:
    user = factory.user()
    project = factory.project(user, "Trial")
    browser = factory.login(user)
    _judge(project.id, fake_provider.url)
    run_id = factory.finished_run(user, project)
    output_id = first_output(run_id)
    succeed(output_id, "Paris is the capital of France.")
    before = _spent(project.id)
    reply = browser.post(f"/api/projects/{project.id}/scorers/try", json={
        "kind": "llm_judge", "params": VALID["llm_judge"], "output_id": output_id})
    assert reply.status_code == 200, reply.json
    [result] = reply.json["results"]
    assert result["error"] is None and result["judge_model"] == "Judge"
    assert result["value"] == pytest.approx(0.6 * 0.75 + 0.4 * 1.0)
    assert result["passed"] is True
    cost = reply.json["cost_micros"]
    assert cost > 0 and reply.json["judge_calls"] == 1
    assert _spent(project.id) == before + cost
    # The cost report counts the trial as its own kind of spend, on the judge's model.
    report = browser.get(f"/api/projects/{project.id}/reports/costs").json
    kinds = {k["kind"]: k["spent_micros"] for k in report["total"]["by_kind"]}
    assert kinds["scorer_trials"] == cost
    assert report["total"]["spent_micros"] == _spent(project.id)
    assert [m["model_name"] for m in report["by_model"] if m["model_name"] == "Judge"]
    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(Score)) == 0
        event = session.scalars(select(AuditEvent).where(
            AuditEvent.action == "scorer.tried")).one()
        assert event.data["cost_micros"] == cost and event.data["output_id"] == output_id
    pasted = browser.post(f"/api/projects/{project.id}/scorers/try", json={
        "kind": "rules", "params": {"yaml": RULES},
        "sample": {"output": "We never refund."}})
    assert pasted.status_code == 200 and pasted.json["cost_micros"] == 0
    assert pasted.json["results"][0]["passed"] is False
    assert _spent(project.id) == before + cost
    # A cap with less room left than the judge call could cost refuses the trial.
    with db.factory() as session:
        row = session.get(Project, project.id)
        assert row is not None
        row.budget_micros = row.spent_micros + 1
        session.commit()
    capped = browser.post(f"/api/projects/{project.id}/scorers/try", json={
        "kind": "llm_judge", "params": VALID["llm_judge"], "output_id": output_id})
    assert capped.status_code == 422 and capped.json["code"] == "BUDGET_EXCEEDED"
    assert _spent(project.id) == before + cost


def test_try_refuses_what_it_cannot_do(owner: tuple[Session, int], factory: Factory) -> None:
    browser, pid = owner
    url = f"/api/projects/{pid}/scorers/try"
    both = browser.post(url, json={"kind": "regex", "params": {"pattern": "x"},
                                   "output_id": 1, "sample": {"output": "x"}})
    neither = browser.post(url, json={"kind": "regex", "params": {"pattern": "x"}})
    assert both.status_code == neither.status_code == 422
    assert browser.post(url, json={"kind": "regex", "params": {"pattern": "x"},
                                   "output_id": 999999}).status_code == 404
    pair = browser.post(url, json={"kind": "pairwise_judge", "params": {"judges": ["J"]},
                                   "sample": {"output": "x"}})
    assert pair.status_code == 422 and "kind" in pair.json["errors"]["json"]
    code = browser.post(url, json={"kind": "code_execution", "params": VALID["code_execution"],
                                   "sample": {"output": "def add(a, b): return a + b"}})
    assert code.status_code == 422 and "kind" in code.json["errors"]["json"]
    with db.factory() as session:
        project = session.get(Project, pid)
        assert project is not None
        project.budget_micros, project.spent_micros = 100, 100
        session.commit()
    spent = browser.post(url, json={"kind": "llm_judge", "params": VALID["llm_judge"],
                                    "sample": {"output": "x"}})
    assert spent.status_code == 422 and spent.json["code"] == "BUDGET_EXCEEDED"


def test_viewers_preview_but_cannot_create_or_try(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Roles")
    viewer = factory.login(factory.member(project, Role.viewer))
    base = f"/api/projects/{project.id}/scorers"
    draft = {"kind": "regex", "params": {"pattern": "x"}}
    assert viewer.post(base, json={"name": "R", **draft}).status_code == 403
    assert viewer.post(f"{base}/try", json={**draft, "sample": {"output": "x"}}
                       ).status_code == 403
    assert viewer.post(f"{base}/preview", json={
        "kind": "llm_judge", "params": VALID["llm_judge"], "sample": {"output": "x"}}
    ).status_code == 200
    outsider = factory.signed_in()
    assert outsider.post(f"{base}/preview", json={
        "kind": "llm_judge", "params": VALID["llm_judge"], "sample": {"output": "x"}}
    ).status_code in (403, 404)
    assert outsider.get(f"/api/scorer-kinds?project_id={project.id}").status_code in (403, 404)
