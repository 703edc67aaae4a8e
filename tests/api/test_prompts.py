"""Prompts through the API: version 1 on create, immutable numbered versions, variables
parsed on save, few-shots and tools checked, a required changelog, parents and lineage, one
production version, roles, audit, and bad input that writes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.projects.models import AuditEvent, Role
from assay.core.prompts.models import Prompt, PromptVersion
from assay.extensions import db
from tests.factories import Factory, Session


@pytest.fixture
def owner(factory: Factory) -> tuple[Session, int]:
    user = factory.user()
    project = factory.project(user, "Prompts")
    return factory.login(user), project.id


def _url(project_id: int, tail: str = "") -> str:
    return f"/api/projects/{project_id}/prompts{tail}"


def _create(browser: Session, pid: int, **body: Any) -> dict[str, Any]:
    body = {"name": "Support", "template": "Answer {{ question }} for {{audience}}", **body}
    reply = browser.post(_url(pid), json=body)
    assert reply.status_code == 201, reply.json
    return dict(reply.json)


NOTE = "Tighter wording"


def _counts() -> tuple[int, int]:
    with db.factory() as session:
        return (session.scalar(select(func.count()).select_from(Prompt)) or 0,
                session.scalar(select(func.count()).select_from(PromptVersion)) or 0)


def test_create_makes_version_1_with_parsed_variables(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid, description="For support", system="Tone: {{ tone }}",
                   few_shots=[{"input": "Hi", "output": "Hello!"}], note="first")
    assert made["name"] == "Support" and made["description"] == "For support"
    latest = made["latest"]
    assert latest["number"] == 1 and latest["variables"] == ["question", "audience", "tone"]
    assert latest["few_shots"] == [{"input": "Hi", "output": "Hello!"}]
    assert latest["note"] == "first" and latest["system"] == "Tone: {{ tone }}"
    assert [v["number"] for v in made["versions"]] == [1]
    listed = browser.get(_url(pid)).json
    assert listed["total"] == 1 and listed["items"][0]["latest"]["id"] == latest["id"]


def test_versions_are_added_numbered_and_never_changed(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid)
    url = _url(pid, f"/{made['id']}/versions")
    second = browser.post(url, json={"template": "Now {{x}}", "note": "second try"})
    assert second.status_code == 201, second.json
    assert second.json["number"] == 2 and second.json["variables"] == ["x"]
    third = browser.post(url, json={"template": "Plain", "note": "no variables"}).json
    assert third["number"] == 3 and third["variables"] == [] and third["few_shots"] == []
    detail = browser.get(_url(pid, f"/{made['id']}")).json
    assert [v["number"] for v in detail["versions"]] == [3, 2, 1]
    assert detail["latest"]["number"] == 3
    assert detail["versions"][2] == made["latest"]  # version 1 is as it was
    page = browser.get(url, query_string={"page_size": 2}).json
    assert page["total"] == 3 and [v["number"] for v in page["items"]] == [3, 2]
    with db.factory() as session:
        actions = list(session.scalars(select(AuditEvent.action).where(
            AuditEvent.project_id == pid).order_by(AuditEvent.id)))
    assert actions[-3:] == ["prompt.created", "prompt.version_added", "prompt.version_added"]


def test_names_are_unique_per_project(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    _create(browser, pid)
    reply = browser.post(_url(pid), json={"name": " Support ", "template": "x"})
    assert reply.status_code == 409 and reply.json["code"] == "NAME_TAKEN"
    assert _counts() == (1, 1)


@pytest.mark.parametrize(("body", "field"), [
    ({"template": ""}, "template"),
    ({"template": "   "}, "template"),
    ({"template": "x" * 40_001}, "template"),
    ({"system": "x" * 20_001}, "system"),
    ({"few_shots": [{"input": "a"}]}, "few_shots"),
    ({"few_shots": [{"input": "a", "output": ""}]}, "few_shots"),
    ({"few_shots": [{"input": "a", "output": "b", "extra": "c"}]}, "few_shots"),
    ({"few_shots": [{"input": "a", "output": "b"}] * 11}, "few_shots"),
    ({"few_shots": [{"input": "a", "output": "b" * 4_001}]}, "few_shots"),
    ({"few_shots": "a, b"}, "few_shots"),
    ({"name": ""}, "name"),
    ({"template": None}, "template"),
    ({"system": 5}, "system"),
])
def test_bad_input_is_refused_and_writes_nothing(owner: tuple[Session, int],
                                                 body: dict[str, Any], field: str) -> None:
    browser, pid = owner
    reply = browser.post(_url(pid), json={"name": "P", "template": "ok", **body})
    assert reply.status_code == 422, reply.json
    assert field in reply.json["errors"]["json"], reply.json
    assert _counts() == (0, 0)


def test_viewers_read_and_editors_write(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner)
    made = _create(factory.login(owner), project.id)
    viewer = factory.login(factory.member(project, Role.viewer))
    editor = factory.login(factory.member(project, Role.editor))
    assert viewer.get(_url(project.id, f"/{made['id']}")).status_code == 200
    assert viewer.post(_url(project.id), json={"name": "V", "template": "x"}).status_code == 403
    assert viewer.post(_url(project.id, f"/{made['id']}/versions"),
                       json={"template": "x", "note": NOTE}).status_code == 403
    assert viewer.request("PUT", _url(project.id, f"/{made['id']}/production"),
                      json={"version_id": made["latest"]["id"]}).status_code == 403
    assert _counts() == (1, 1)
    assert editor.post(_url(project.id, f"/{made['id']}/versions"),
                       json={"template": "x", "note": NOTE}).status_code == 201
    stranger = factory.signed_in()
    assert stranger.get(_url(project.id, f"/{made['id']}")).status_code == 404


def test_a_prompt_of_another_project_is_not_found(factory: Factory) -> None:
    owner = factory.user()
    mine, theirs = factory.project(owner, "Mine"), factory.project(owner, "Theirs")
    browser = factory.login(owner)
    made = _create(browser, theirs.id)
    assert browser.get(_url(mine.id, f"/{made['id']}")).status_code == 404
    assert browser.post(_url(mine.id, f"/{made['id']}/versions"),
                        json={"template": "x", "note": NOTE}).status_code == 404
    assert browser.request("PUT", _url(mine.id, f"/{made['id']}/production"),
                       json={"version_id": made["latest"]["id"]}).status_code == 404
