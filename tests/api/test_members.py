"""Project members: list, add by email, change role, remove; the owner-role rules."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from assay.core.projects.models import Membership, Project, Role
from assay.extensions import db
from tests.factories import Factory, Session, race


def _url(project: Project, user_id: int | None = None) -> str:
    base = f"/api/projects/{project.id}/members"
    return base if user_id is None else f"{base}/{user_id}"


def _roles(project: Project) -> dict[int, str]:
    with db.factory() as session:
        rows = session.execute(select(Membership.user_id, Membership.role).where(
            Membership.project_id == project.id))
        return {user_id: role for user_id, role in rows}


def _error(reply: Any, status: int, code: str) -> dict[str, Any]:
    assert reply.status_code == status, reply.get_data(as_text=True)
    assert reply.json["code"] == code and reply.json["status"] == status
    return dict(reply.json)


@pytest.fixture
def owned(factory: Factory) -> tuple[Project, Session]:
    owner = factory.user()
    project = factory.project(owner)
    return project, factory.login(owner)


def test_list_members_with_their_roles(factory: Factory, owned: tuple[Project, Session]) -> None:
    project, owner = owned
    editor = factory.member(project, Role.editor)
    reply = owner.get(_url(project))
    assert reply.status_code == 200 and reply.json is not None
    assert reply.json["total"] == 2 and reply.json["page"] == 1
    items = reply.json["items"]
    assert [(m["user_id"], m["role"]) for m in items] == [(owner.user_id, "owner"),
                                                          (editor.id, "editor")]
    assert items[1]["email"] == editor.email and "password_hash" not in items[1]


def test_member_list_is_paginated(factory: Factory, owned: tuple[Project, Session]) -> None:
    project, owner = owned
    for _ in range(4):
        factory.member(project, Role.viewer)
    page = owner.get(_url(project), query_string={"page": 2, "page_size": 2}).json
    assert page is not None
    assert page["total"] == 5 and len(page["items"]) == 2 and page["page_size"] == 2
    last = owner.get(_url(project), query_string={"page": 3, "page_size": 2}).json
    assert last is not None and len(last["items"]) == 1


@pytest.mark.parametrize("role", ["viewer", "reviewer", "editor", "admin", "owner"])
def test_owner_adds_a_member_by_email_with_any_role(
        factory: Factory, owned: tuple[Project, Session], role: str) -> None:
    project, owner = owned
    newcomer = factory.user()
    reply = owner.post(_url(project), json={"email": newcomer.email.upper(), "role": role})
    assert reply.status_code == 201, reply.json
    assert reply.json is not None
    assert reply.json["user_id"] == newcomer.id and reply.json["role"] == role
    assert reply.json["email"] == newcomer.email
    assert _roles(project)[newcomer.id] == role
    seen = factory.login(newcomer).get(f"/api/projects/{project.id}")
    assert seen.status_code == 200 and seen.json is not None and seen.json["role"] == role


def test_adding_an_unknown_email_is_404_user_not_found(owned: tuple[Project, Session]) -> None:
    project, owner = owned
    reply = owner.post(_url(project), json={"email": "ghost@example.com", "role": "viewer"})
    body = _error(reply, 404, "USER_NOT_FOUND")
    assert body["errors"]["json"]["email"]
    assert len(_roles(project)) == 1


def test_adding_an_existing_member_is_409(factory: Factory,
                                         owned: tuple[Project, Session]) -> None:
    project, owner = owned
    member = factory.member(project, Role.viewer)
    reply = owner.post(_url(project), json={"email": member.email, "role": "editor"})
    _error(reply, 409, "ALREADY_MEMBER")
    assert _roles(project)[member.id] == "viewer"
    reply = owner.post(_url(project), json={"email": factory.user().email, "role": "editor"})
    assert reply.status_code == 201
    again = owner.post(_url(project), json={"email": reply.json["email"],  # type: ignore[index]
                                            "role": "viewer"})
    _error(again, 409, "ALREADY_MEMBER")


def test_change_a_members_role(factory: Factory, owned: tuple[Project, Session]) -> None:
    project, owner = owned
    member = factory.member(project, Role.viewer)
    reply = owner.patch(_url(project, member.id), json={"role": "editor"})
    assert reply.status_code == 200 and reply.json is not None
    assert reply.json["role"] == "editor" and reply.json["user_id"] == member.id
    assert _roles(project)[member.id] == "editor"
    started = factory.login(member).post(f"/api/projects/{project.id}/runs/demo")
    assert started.status_code == 202  # the new role is effective at once


def test_change_role_of_a_non_member_is_404(factory: Factory,
                                           owned: tuple[Project, Session]) -> None:
    project, owner = owned
    stranger = factory.user()
    _error(owner.patch(_url(project, stranger.id), json={"role": "editor"}), 404, "NOT_FOUND")
    _error(owner.delete(_url(project, stranger.id)), 404, "NOT_FOUND")
    assert stranger.id not in _roles(project)


def test_remove_a_member(factory: Factory, owned: tuple[Project, Session]) -> None:
    project, owner = owned
    member = factory.member(project, Role.editor)
    browser = factory.login(member)
    assert browser.get(f"/api/projects/{project.id}").status_code == 200
    assert owner.delete(_url(project, member.id)).status_code == 204
    assert member.id not in _roles(project)
    _error(browser.get(f"/api/projects/{project.id}"), 404, "NOT_FOUND")
    assert browser.get("/api/projects").json["total"] == 0  # type: ignore[index]


def test_admin_manages_members_below_owner(factory: Factory,
                                          owned: tuple[Project, Session]) -> None:
    project, _ = owned
    admin = factory.login(factory.member(project, Role.admin))
    newcomer = factory.user()
    reply = admin.post(_url(project), json={"email": newcomer.email, "role": "admin"})
    assert reply.status_code == 201
    assert admin.patch(_url(project, newcomer.id), json={"role": "viewer"}).status_code == 200
    assert admin.delete(_url(project, newcomer.id)).status_code == 204
    assert newcomer.id not in _roles(project)


def test_a_member_can_leave(factory: Factory, owned: tuple[Project, Session]) -> None:
    project, _ = owned
    member = factory.member(project, Role.admin)
    browser = factory.login(member)
    assert browser.delete(_url(project, member.id)).status_code == 204
    assert member.id not in _roles(project)


def test_owner_can_transfer_ownership(factory: Factory, owned: tuple[Project, Session]) -> None:
    project, owner = owned
    heir = factory.member(project, Role.admin)
    assert owner.patch(_url(project, heir.id), json={"role": "owner"}).status_code == 200
    assert owner.patch(_url(project, owner.user_id), json={"role": "admin"}).status_code == 200
    assert _roles(project) == {owner.user_id: "admin", heir.id: "owner"}
    _error(owner.patch(_url(project, heir.id), json={"role": "admin"}), 403, "FORBIDDEN")


@pytest.mark.parametrize("body", [{"role": "emperor"}, {"role": ""}, {}, {"role": None}])
def test_change_role_rejects_invalid_roles(factory: Factory, owned: tuple[Project, Session],
                                          body: dict[str, Any]) -> None:
    project, owner = owned
    member = factory.member(project, Role.viewer)
    reply = owner.patch(_url(project, member.id), json=body)
    assert reply.status_code == 422 and reply.json is not None
    assert "role" in reply.json["errors"]["json"]
    assert _roles(project)[member.id] == "viewer"


@pytest.mark.parametrize("body", [{"email": "not-an-email", "role": "viewer"},
                                  {"email": "a@example.com", "role": "emperor"},
                                  {"role": "viewer"}])
def test_add_rejects_invalid_input(owned: tuple[Project, Session], body: dict[str, Any]) -> None:
    project, owner = owned
    reply = owner.post(_url(project), json=body)
    assert reply.status_code == 422 and reply.json is not None
    assert reply.json["code"] == "VALIDATION_ERROR"
    assert len(_roles(project)) == 1


def test_a_double_submitted_add_is_one_membership_and_one_409(
        app: Flask, factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both requests pass the 'already a member?' check before either inserts."""
    owner = factory.user()
    project = factory.project(owner)
    newcomer = factory.user()
    token = factory.api_token(owner)
    body = {"email": newcomer.email, "role": "viewer"}
    replies = race(app, monkeypatch, "assay.core.projects.service.touch",
                   [("POST", _url(project), body)] * 2,
                   headers={"Authorization": f"Bearer {token}"})
    assert sorted(r.status_code for r in replies) == [201, 409], [r.json for r in replies]
    conflict = next(r for r in replies if r.status_code == 409)
    assert conflict.json is not None and conflict.json["code"] == "ALREADY_MEMBER"
    assert _roles(project) == {owner.id: "owner", newcomer.id: "viewer"}
