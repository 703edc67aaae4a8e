"""Invites for emails not yet registered: an admin invites an email with a role, the
invite is listed and revocable, and registering with that email makes the membership."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select, update

from assay.core.base import utcnow
from assay.core.projects.models import Invite, Membership, Project, Role
from assay.extensions import db
from tests.factories import PASSWORD, Factory, Session


def _url(project: Project, invite_id: int | None = None) -> str:
    base = f"/api/projects/{project.id}/invites"
    return base if invite_id is None else f"{base}/{invite_id}"


def _register(app: Flask, email: str) -> Any:
    reply = app.test_client().post("/api/auth/register", json={
        "email": email, "password": PASSWORD, "confirm_password": PASSWORD})
    assert reply.status_code == 201, reply.json
    return reply.json["user"]


def _role_of(project: Project, user_id: int) -> str | None:
    with db.factory() as session:
        return session.scalar(select(Membership.role).where(
            Membership.project_id == project.id, Membership.user_id == user_id))


@pytest.fixture
def owned(factory: Factory) -> tuple[Project, Session]:
    owner = factory.user()
    return factory.project(owner), factory.login(owner)


def test_an_invite_is_accepted_at_registration(app: Flask, factory: Factory,
                                              owned: tuple[Project, Session]) -> None:
    project, owner = owned
    reply = owner.post(_url(project), json={"email": "Bob@X.com", "role": "editor"})
    assert reply.status_code == 201, reply.json
    assert reply.json["email"] == "bob@x.com" and reply.json["role"] == "editor"
    assert reply.json["expired"] is False
    listed = owner.get(_url(project)).json["items"]
    assert [(i["email"], i["role"]) for i in listed] == [("bob@x.com", "editor")]

    bob = _register(app, "bob@x.com")
    assert _role_of(project, bob["id"]) == "editor"
    assert owner.get(_url(project)).json["items"] == []  # accepted: no longer pending
    projects = factory.login(_user(bob["id"])).get("/api/projects").json["items"]
    assert [p["id"] for p in projects] == [project.id]
    texts = [e["description"] for e in owner.get(f"/api/projects/{project.id}/audit")
             .json["items"]]
    assert texts[0] == "bob@x.com joined as editor by invite"
    assert texts[1].endswith("invited bob@x.com as editor")


def _user(user_id: int) -> Any:
    from assay.core.auth.models import User

    with db.factory() as session:
        return session.get(User, user_id)


def test_a_revoked_or_expired_invite_gives_nothing(app: Flask, factory: Factory,
                                                   owned: tuple[Project, Session]) -> None:
    project, owner = owned
    first = owner.post(_url(project), json={"email": "gone@x.com", "role": "viewer"}).json
    assert owner.delete(_url(project, first["id"])).status_code == 204
    assert owner.delete(_url(project, first["id"])).status_code == 404
    assert owner.post(_url(project), json={"email": "late@x.com", "role": "viewer"}
                      ).status_code == 201
    with db.factory() as session:
        session.execute(update(Invite).where(Invite.email == "late@x.com")
                        .values(expires_at=utcnow() - timedelta(minutes=1)))
        session.commit()
    assert owner.get(_url(project)).json["items"][0]["expired"] is True
    for email in ("gone@x.com", "late@x.com"):
        assert _role_of(project, _register(app, email)["id"]) is None
    texts = [e["description"] for e in owner.get(f"/api/projects/{project.id}/audit")
             .json["items"]]
    assert any(t.endswith("revoked the invite of gone@x.com") for t in texts)


def test_an_expired_invite_can_be_sent_again(owned: tuple[Project, Session]) -> None:
    project, owner = owned
    owner.post(_url(project), json={"email": "again@x.com", "role": "viewer"})
    assert owner.post(_url(project), json={"email": "again@x.com", "role": "viewer"}
                      ).json["code"] == "ALREADY_INVITED"
    with db.factory() as session:
        session.execute(update(Invite).values(expires_at=utcnow() - timedelta(minutes=1)))
        session.commit()
    reply = owner.post(_url(project), json={"email": "again@x.com", "role": "editor"})
    assert reply.status_code == 201 and reply.json["expired"] is False


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"email": "not-an-email", "role": "viewer"}, 422, "VALIDATION_ERROR"),
    ({"email": "x@x.com", "role": "boss"}, 422, "VALIDATION_ERROR"),
    ({"email": "x@x.com"}, 422, "VALIDATION_ERROR"),
])
def test_bad_invites_are_refused(owned: tuple[Project, Session], body: dict[str, Any],
                                 status: int, code: str) -> None:
    project, owner = owned
    reply = owner.post(_url(project), json=body)
    assert reply.status_code == status and reply.json["code"] == code
    assert owner.get(_url(project)).json["items"] == []


def test_a_registered_email_is_added_as_a_member_not_invited(
        factory: Factory, owned: tuple[Project, Session]) -> None:
    project, owner = owned
    someone = factory.user()
    reply = owner.post(_url(project), json={"email": someone.email, "role": "viewer"})
    assert reply.status_code == 409 and reply.json["code"] == "USER_REGISTERED"
    assert "email" in reply.json["errors"]["json"]


def test_roles_for_invites(app: Flask, factory: Factory,
                           owned: tuple[Project, Session]) -> None:
    project, _ = owned
    admin = factory.login(factory.member(project, Role.admin))
    editor = factory.login(factory.member(project, Role.editor))
    assert editor.post(_url(project), json={"email": "e@x.com", "role": "viewer"}
                       ).status_code == 403
    assert editor.get(_url(project)).status_code == 200  # members see who is invited
    reply = admin.post(_url(project), json={"email": "o@x.com", "role": "owner"})
    assert reply.status_code == 403  # only an owner makes owners
    made = admin.post(_url(project), json={"email": "a@x.com", "role": "admin"}).json
    assert editor.delete(_url(project, made["id"])).status_code == 403
    stranger = factory.signed_in()
    assert stranger.get(_url(project)).status_code == 404
    assert _role_of(project, _register(app, "a@x.com")["id"]) == "admin"
