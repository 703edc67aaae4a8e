"""A prompt's history through the API: every new version has a changelog of 10-500
characters (422 and nothing saved otherwise) and a parent, the lineage walks the parents,
tool schemas are checked, and exactly one version is marked for production, audited."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.projects.models import AuditEvent, Project, Role
from assay.core.projects.service import purge_project
from assay.core.prompts.models import Prompt, PromptVersion
from assay.extensions import db
from tests.factories import Factory, Session

TOOL = {"name": "lookup_order", "description": "Find an order",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}},
                       "required": ["id"]}}


@pytest.fixture
def made(factory: Factory) -> tuple[Session, int, dict[str, Any]]:
    user = factory.user()
    project = factory.project(user, "Lineage")
    browser = factory.login(user)
    reply = browser.post(f"/api/projects/{project.id}/prompts",
                         json={"name": "Support", "template": "Answer {{question}}"})
    assert reply.status_code == 201, reply.json
    return browser, project.id, dict(reply.json)


def _url(pid: int, prompt: dict[str, Any], tail: str = "") -> str:
    return f"/api/projects/{pid}/prompts/{prompt['id']}{tail}"


def _versions() -> int:
    with db.factory() as session:
        return session.scalar(select(func.count()).select_from(PromptVersion)) or 0


def _actions(pid: int) -> list[tuple[str, dict[str, Any]]]:
    with db.factory() as session:
        return [(e.action, e.data) for e in session.scalars(select(AuditEvent).where(
            AuditEvent.project_id == pid).order_by(AuditEvent.id))]


@pytest.mark.parametrize("note", ["x" * 9, "x" * 501, "   short   ", None, ""])
def test_a_changelog_outside_10_to_500_characters_saves_nothing(
        made: tuple[Session, int, dict[str, Any]], note: str | None) -> None:
    browser, pid, prompt = made
    body: dict[str, Any] = {"template": "Answer {{question}} briefly"}
    if note is not None:
        body["note"] = note
    reply = browser.post(_url(pid, prompt, "/versions"), json=body)
    assert reply.status_code == 422, reply.json
    assert "note" in reply.json["errors"]["json"], reply.json
    assert _versions() == 1


def test_changelogs_of_10_and_500_characters_are_kept(
        made: tuple[Session, int, dict[str, Any]]) -> None:
    browser, pid, prompt = made
    for note in ("x" * 10, "y" * 500):
        reply = browser.post(_url(pid, prompt, "/versions"), json={"template": "t", "note": note})
        assert reply.status_code == 201 and reply.json["note"] == note, reply.json
    assert _versions() == 3


def test_a_new_version_has_a_parent_and_the_lineage_walks_it(
        made: tuple[Session, int, dict[str, Any]]) -> None:
    browser, pid, prompt = made
    v1 = prompt["latest"]
    assert v1["parent_id"] is None and prompt["production_number"] == 1
    v2 = browser.post(_url(pid, prompt, "/versions"),
                      json={"template": "Two {{question}}", "note": "Second attempt"}).json
    assert v2["parent_id"] == v1["id"]  # the latest when no parent is named
    branch = browser.post(_url(pid, prompt, "/versions"), json={
        "template": "Three {{question}}", "note": "Back to the first", "parent_id": v1["id"]})
    assert branch.status_code == 201 and branch.json["parent_id"] == v1["id"]
    v4 = browser.post(_url(pid, prompt, "/versions"), json={
        "template": "Four", "note": "From the second", "parent_id": v2["id"]}).json
    lineage = browser.get(_url(pid, prompt, f"/versions/{v4['id']}/lineage")).json
    assert [v["number"] for v in lineage["items"]] == [1, 2, 4] and lineage["total"] == 3
    assert [v["note"] for v in lineage["items"]] == [None, "Second attempt", "From the second"]
    assert all(v["author"] for v in lineage["items"])
    assert _actions(pid)[-1] == ("prompt.version_added", {
        "version": 4, "parent": 2, "changelog": "From the second", "variables": []})


def test_a_parent_from_another_prompt_is_refused(
        made: tuple[Session, int, dict[str, Any]]) -> None:
    browser, pid, prompt = made
    other = browser.post(f"/api/projects/{pid}/prompts",
                         json={"name": "Other", "template": "x"}).json
    reply = browser.post(_url(pid, prompt, "/versions"), json={
        "template": "t", "note": "Borrowed parent", "parent_id": other["latest"]["id"]})
    assert reply.status_code == 422 and "parent_id" in reply.json["errors"]["json"]
    assert _versions() == 2
    missing = browser.get(_url(pid, prompt, f"/versions/{other['latest']['id']}/lineage"))
    assert missing.status_code == 404


def test_production_is_exclusive_and_audited(made: tuple[Session, int, dict[str, Any]]) -> None:
    browser, pid, prompt = made
    v2 = browser.post(_url(pid, prompt, "/versions"),
                      json={"template": "Two", "note": "Second attempt"}).json
    reply = browser.request("PUT", _url(pid, prompt, "/production"), json={"version_id": v2["id"]})
    assert reply.status_code == 200, reply.json
    assert reply.json["production_version_id"] == v2["id"]
    assert reply.json["production_number"] == 2
    with db.factory() as session:
        stored = session.get(Prompt, prompt["id"])
        assert stored is not None and stored.production_version_id == v2["id"]
    listed = browser.get(f"/api/projects/{pid}/prompts").json["items"][0]
    assert listed["production_number"] == 2 and listed["latest"]["number"] == 2
    again = browser.request("PUT", _url(pid, prompt, "/production"), json={"version_id": v2["id"]})
    assert again.status_code == 200  # already marked: no second event
    back = browser.request("PUT", _url(pid, prompt, "/production"),
                       json={"version_id": prompt["latest"]["id"]}).json
    assert back["production_number"] == 1
    events = [data for action, data in _actions(pid) if action == "prompt.production_set"]
    assert events == [{"version": 2, "previous": 1}, {"version": 1, "previous": 2}]


def test_production_must_be_a_version_of_the_prompt(
        made: tuple[Session, int, dict[str, Any]]) -> None:
    browser, pid, prompt = made
    other = browser.post(f"/api/projects/{pid}/prompts",
                         json={"name": "Other", "template": "x"}).json
    reply = browser.request("PUT", _url(pid, prompt, "/production"),
                        json={"version_id": other["latest"]["id"]})
    assert reply.status_code == 422 and "version_id" in reply.json["errors"]["json"]
    assert browser.get(_url(pid, prompt)).json["production_number"] == 1


def test_editors_switch_production_and_viewers_cannot(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner)
    browser = factory.login(owner)
    prompt = browser.post(f"/api/projects/{project.id}/prompts",
                          json={"name": "P", "template": "x"}).json
    v2 = browser.post(_url(project.id, prompt, "/versions"),
                      json={"template": "y", "note": "Second attempt"}).json
    viewer = factory.login(factory.member(project, Role.viewer))
    editor = factory.login(factory.member(project, Role.editor))
    url = _url(project.id, prompt, "/production")
    assert viewer.request("PUT", url, json={"version_id": v2["id"]}).status_code == 403
    assert viewer.get(_url(project.id, prompt, f"/versions/{v2['id']}/lineage")).status_code == 200
    assert browser.get(_url(project.id, prompt)).json["production_number"] == 1
    assert editor.request("PUT", url, json={"version_id": v2["id"]}).status_code == 200


def test_tools_are_kept_and_checked(made: tuple[Session, int, dict[str, Any]]) -> None:
    browser, pid, prompt = made
    ok = browser.post(_url(pid, prompt, "/versions"),
                      json={"template": "t", "note": "Adds a tool", "tools": [TOOL]})
    assert ok.status_code == 201 and ok.json["tools"] == [TOOL]
    for tools in ([{"name": "bad name"}], [TOOL, TOOL], [{"name": "x", "extra": 1}],
                  [{"name": "x", "parameters": {"type": "string"}}],
                  [{"name": "x", "parameters": {"type": "object", "properties": 5}}], ["x"]):
        reply = browser.post(_url(pid, prompt, "/versions"),
                             json={"template": "t", "note": "Adds a tool", "tools": tools})
        assert reply.status_code == 422, (tools, reply.json)
        assert any(k.startswith("tools") for k in reply.json["errors"]["json"]), reply.json
    assert _versions() == 2


def test_a_project_with_prompt_history_can_be_deleted(
        made: tuple[Session, int, dict[str, Any]]) -> None:
    """The production pointer and the parent links never block the cascade."""
    browser, pid, prompt = made
    v2 = browser.post(_url(pid, prompt, "/versions"),
                      json={"template": "Two", "note": "Second attempt"}).json
    assert browser.request("PUT", _url(pid, prompt, "/production"),
                           json={"version_id": v2["id"]}).status_code == 200
    assert browser.delete(f"/api/projects/{pid}").status_code == 204
    with db.factory() as session:  # purged by retention once its grace period is over
        purge_project(session, session.get(Project, pid))
        session.commit()
        assert session.scalar(select(func.count()).select_from(Prompt)) == 0
    assert _versions() == 0
