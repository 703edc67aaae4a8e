"""The judge tab through HTTP, on the fake provider: who may spend a project's money on
it, the budget reserved and settled, wrong and invalid verdicts graded as the spec says
(an invalid verdict is a fail of high severity with an actionable error), and the
meta-judge's critique kept with every attempt."""

from __future__ import annotations

import json

import httpx
import pytest
from sqlalchemy import select, update

from assay.core.challenges.models import Attempt
from assay.core.projects.models import Project, Role
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from tests.api.arena_helpers import BASE, approve, attempt, fixture, price, script_judge, seed, spec
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory

CID = "refund-verification"


def _project_money(project_id: int) -> tuple[int, int]:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        return project.spent_micros, project.reserved_micros


def test_only_an_editor_of_the_paying_project_runs_a_judge(
        factory: Factory, fake: FakeProviderThread) -> None:  # noqa: F811
    seed()
    owner = factory.user()
    project = factory.project(owner, "Pays")
    judge = script_judge(fake.url, project.id, CID)
    rubric = fixture(CID, "reference.judge.txt")
    body = {"tab": "judge", "text": rubric, "set": "dev", "project_id": project.id,
            "judge": judge}
    viewer = factory.login(factory.member(project, Role.viewer))
    refused = attempt(viewer, CID, **body)
    assert refused.status_code == 403 and refused.json["code"] == "FORBIDDEN"
    stranger = factory.signed_in()
    assert attempt(stranger, CID, **body).status_code in (403, 404)
    editor = factory.login(factory.member(project, Role.editor))
    missing = attempt(editor, CID, tab="judge", text=rubric, set="dev")
    assert missing.status_code == 422 and set(missing.json["errors"]["json"]) == {
        "project_id", "judge"}
    unknown = attempt(editor, CID, **{**body, "judge": "Nobody"})
    assert unknown.status_code == 422 and "No model 'Nobody'" in str(unknown.json["errors"])
    short = attempt(editor, CID, **{**body, "text": "too short"})
    assert short.status_code == 422
    assert editor.get(f"{BASE}/{CID}/attempts").json["total"] == 0
    assert httpx.get(f"{fake.url}/_fake/stats").json()["requests"].get(
        f"arena-judge-{CID}", 0) == 0


def test_wrong_and_invalid_verdicts_are_misses_and_the_critique_is_kept(
        factory: Factory, fake: FakeProviderThread) -> None:  # noqa: F811
    seed()
    owner = factory.user()
    project = factory.project(owner, "Pays")
    dev = [t for t in spec(CID).traces if t.split == "dev"]
    flipped = {t.id: {"pass": t.label == "fail", "severity": "high", "cluster": "wrong"}
               for t in dev[:4]}
    judge = script_judge(fake.url, project.id, CID, flipped)
    config = httpx.get(f"{fake.url}/_fake/config").json()
    invalid = dev[5]  # its script answers with prose instead of the verdict JSON
    for script in config["scripts"]:
        if script.get("model") == f"arena-judge-{CID}" and \
                json.loads(script["reply"])["reason"] and \
                script["pattern"].startswith("\\[0\\]\\ user:\\ Can\\ I\\ still\\ return"):
            script["reply"] = "I think this one passes."
    httpx.post(f"{fake.url}/_fake/config", json={"scripts": config["scripts"]})
    editor = factory.login(factory.member(project, Role.editor))
    reply = attempt(editor, CID, tab="judge", text="Pass if the agent is helpful.", set="dev",
                    project_id=project.id, judge=judge)
    assert reply.status_code == 201, reply.json
    results = {r["trace_id"]: r for r in reply.json["results"]}
    for trace in dev[:4]:
        assert not results[trace.id]["agreed"] and results[trace.id]["miss"] == (
            "missed_failure" if trace.label == "fail" else "false_alarm")
    broken = results[invalid.id]
    assert broken["verdict"] == "fail" and broken["severity"] == "high" and broken["error"]
    assert reply.json["summary"]["passed"] == 12 - 4 - (invalid.label == "pass")
    critique = reply.json["critique"]
    assert critique["judge"] == judge and critique["critique"]
    assert critique["vague_phrases"] == ["helpful"] and critique["high_variance"]
    with db.factory() as session:
        kept = session.scalar(select(Attempt).where(Attempt.id == reply.json["id"]))
        assert kept is not None and kept.critique == critique and kept.tab == "judge"


def test_the_project_pays_within_its_budget(factory: Factory, fake: FakeProviderThread,  # noqa: F811
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Shipped with the operator's approved judge: the project still pays, budgeted."""
    seed()
    owner = factory.user()
    project = factory.project(owner, "Pays")
    script_judge(fake.url, project.id, CID)
    judge = approve(monkeypatch, fake.url, f"arena-judge-{CID}", 2_000_000)  # $2 per Mtok
    editor = factory.login(factory.member(project, Role.editor))
    body = {"tab": "judge", "text": fixture(CID, "reference.judge.txt"), "set": "test",
            "project_id": project.id, "judge": judge}
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == project.id).values(
            budget_micros=100))
        session.commit()
    refused = attempt(editor, CID, **body)
    assert refused.status_code == 422 and refused.json["code"] == "BUDGET_EXCEEDED"
    assert _project_money(project.id) == (0, 0)
    assert editor.get(f"{BASE}/{CID}/attempts").json["total"] == 0
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == project.id).values(
            budget_micros=10_000_000))
        session.commit()
    paid = attempt(editor, CID, **body)
    assert paid.status_code == 201, paid.json
    spent, reserved = _project_money(project.id)
    assert reserved == 0 and spent == paid.json["cost_micros"] > 0
    assert paid.json["summary"]["ready"] and paid.json["report"] == []


def test_an_admin_allowance_lets_members_below_editor_practise(
        factory: Factory, fake: FakeProviderThread) -> None:  # noqa: F811
    seed()
    owner = factory.user()
    project = factory.project(owner, "Pays")
    judge = script_judge(fake.url, project.id, CID)
    price(project.id, judge, 2_000_000)
    viewer = factory.login(factory.member(project, Role.viewer))
    body = {"tab": "judge", "text": fixture(CID, "reference.judge.txt"), "set": "dev",
            "project_id": project.id, "judge": judge}
    assert attempt(viewer, CID, **body).status_code == 403
    admin = factory.login(factory.member(project, Role.admin))
    settings = f"/api/projects/{project.id}/settings"
    small = admin.patch(settings, json={"arena_allowance_micros": 10})
    assert small.status_code == 200 and small.json["arena_allowance_micros"] == 10
    refused = attempt(viewer, CID, **body)
    assert refused.status_code == 422 and refused.json["code"] == "ARENA_ALLOWANCE_EXCEEDED"
    assert admin.patch(settings, json={"arena_allowance_micros": 5_000_000}).status_code == 200
    paid = attempt(viewer, CID, **body)
    assert paid.status_code == 201, paid.json
    assert paid.json["cost_micros"] > 0 and _project_money(project.id) == (
        paid.json["cost_micros"], 0)
    assert viewer.get(f"/api/projects/{project.id}/settings").json[
        "arena_allowance_micros"] == 5_000_000
