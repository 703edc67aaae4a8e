"""Project settings: every member reads them, admins change them; bad values are refused
field by field with nothing changed; every change is one audit event with a readable
description, and a PATCH that changes nothing writes none."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.auth.models import User
from assay.core.projects.models import AuditEvent, Project, Role
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.extensions import db
from tests.factories import Factory, Session


def _url(project: Project) -> str:
    return f"/api/projects/{project.id}/settings"


def _events(project: Project) -> int:
    with db.factory() as session:
        return session.scalar(select(func.count()).where(
            AuditEvent.project_id == project.id, AuditEvent.action == "project.updated")) or 0


def _audit(browser: Session, project: Project) -> list[dict[str, Any]]:
    reply = browser.get(f"/api/projects/{project.id}/audit")
    assert reply.status_code == 200, reply.json
    return list(reply.json["items"])


@pytest.fixture
def owned(factory: Factory) -> tuple[Project, Session]:
    owner = factory.user()
    project = factory.project(owner)
    with db.factory() as session:  # after project(), which merges the nameless copy back
        found = session.get(User, owner.id)
        assert found is not None
        found.name = "Ana"
        session.commit()
    return project, factory.login(owner)


def test_a_viewer_reads_the_settings_with_spend_so_far(factory: Factory,
                                                       owned: tuple[Project, Session]) -> None:
    project, _ = owned
    with db.factory() as session:
        row = session.get(Project, project.id)
        assert row is not None
        row.budget_micros, row.spent_micros, row.reserved_micros = 10_000_000, 2_500_000, 100
        session.commit()
    viewer = factory.login(factory.member(project, Role.viewer))
    reply = viewer.get(_url(project))
    assert reply.status_code == 200, reply.json
    assert reply.json == {
        "name": "Project", "description": None, "budget_micros": 10_000_000,
        "alert_threshold": 0.8, "default_concurrency": None, "default_timeout_s": None,
        "default_max_retries": None, "code_execution": False, "arena_allowance_micros": None,
        "spent_micros": 2_500_000,
        "reserved_micros": 100, "can_edit": False, "row_version": 1}


@pytest.mark.parametrize("body", [
    {"name": "Renamed"}, {"description": "What we test"}, {"budget_micros": 10_000_000},
    {"budget_micros": 0}, {"alert_threshold": 0.5}, {"alert_threshold": 1},
    {"default_concurrency": 4}, {"default_timeout_s": 30}, {"default_max_retries": 0},
    {"default_max_retries": 10}, {"code_execution": True},
])
def test_an_admin_changes_each_setting_and_it_is_audited(
        factory: Factory, owned: tuple[Project, Session], body: dict[str, Any]) -> None:
    project, owner = owned
    admin = factory.login(factory.member(project, Role.admin))
    reply = admin.patch(_url(project), json=body)
    assert reply.status_code == 200, reply.json
    assert {k: reply.json[k] for k in body} == body and reply.json["can_edit"] is True
    assert {k: owner.get(_url(project)).json[k] for k in body} == body  # stored
    [event] = [e for e in _audit(owner, project) if e["action"] == "project.updated"]
    assert event["data"]["after"] == body
    assert set(event["data"]["before"]) == set(body)


def test_descriptions_read_as_sentences(owned: tuple[Project, Session]) -> None:
    project, owner = owned
    owner.patch(_url(project), json={"budget_micros": 10_000_000})
    owner.patch(_url(project), json={"alert_threshold": 0.5, "default_max_retries": 4})
    owner.patch(_url(project), json={"code_execution": True})
    owner.patch(_url(project), json={"budget_micros": None})
    texts = [e["description"] for e in _audit(owner, project)]
    assert texts[:4] == [
        "Ana removed the project budget",
        "Ana enabled code execution",
        "Ana set the budget alert threshold to 50% and the default max retries to 4",
        "Ana set the project budget to $10.00",
    ]
    assert texts[-1] == "Ana created the project “Project”"


def test_a_patch_that_changes_nothing_writes_no_event(owned: tuple[Project, Session]) -> None:
    project, owner = owned
    assert owner.patch(_url(project), json={"budget_micros": 5_000_000}).status_code == 200
    before = _events(project)
    for body in ({"budget_micros": 5_000_000}, {"name": "Project", "alert_threshold": 0.8},
                 {"code_execution": False, "default_max_retries": None}):
        assert owner.patch(_url(project), json=body).status_code == 200
    assert _events(project) == before


@pytest.mark.parametrize(("body", "field"), [
    ({"budget_micros": -1}, "budget_micros"),
    ({"budget_micros": 1.5}, "budget_micros"),
    ({"alert_threshold": 0}, "alert_threshold"),
    ({"alert_threshold": 1.01}, "alert_threshold"),
    ({"alert_threshold": -0.2}, "alert_threshold"),
    ({"alert_threshold": "0.5"}, "alert_threshold"),
    ({"default_max_retries": 11}, "default_max_retries"),
    ({"default_max_retries": -1}, "default_max_retries"),
    ({"default_concurrency": 0}, "default_concurrency"),
    ({"default_concurrency": 1001}, "default_concurrency"),
    ({"default_timeout_s": 0}, "default_timeout_s"),
    ({"default_timeout_s": 3601}, "default_timeout_s"),
    ({"code_execution": "yes"}, "code_execution"),
    ({"arena_allowance_micros": -1}, "arena_allowance_micros"),
    ({"arena_allowance_micros": 0.5}, "arena_allowance_micros"),
    ({"arena_allowance_micros": 10**15 + 1}, "arena_allowance_micros"),
    ({"name": ""}, "name"),
    ({"budget_micros": 10_000_000, "default_max_retries": 99}, "default_max_retries"),
])
def test_bad_values_are_refused_with_nothing_changed(
        owned: tuple[Project, Session], body: dict[str, Any], field: str) -> None:
    project, owner = owned
    before = owner.get(_url(project)).json
    reply = owner.patch(_url(project), json=body)
    assert reply.status_code == 422, reply.json
    assert reply.json["code"] == "VALIDATION_ERROR" and field in reply.json["errors"]["json"]
    assert owner.get(_url(project)).json == before
    assert _events(project) == 0


@pytest.mark.parametrize("role", [Role.viewer, Role.reviewer, Role.editor])
def test_below_admin_cannot_change_settings(factory: Factory, owned: tuple[Project, Session],
                                            role: Role) -> None:
    project, _ = owned
    member = factory.login(factory.member(project, role))
    for body in ({"budget_micros": 1}, {"code_execution": True}):
        reply = member.patch(_url(project), json=body)
        assert reply.status_code == 403 and reply.json["code"] == "FORBIDDEN"
    assert member.get(_url(project)).json["code_execution"] is False
    assert _events(project) == 0


def test_a_non_member_learns_nothing(factory: Factory, owned: tuple[Project, Session]) -> None:
    project, _ = owned
    stranger = factory.signed_in()
    assert stranger.get(_url(project)).status_code == 404
    assert stranger.patch(_url(project), json={"budget_micros": 1}).status_code == 404


def test_new_runs_take_the_project_run_defaults(factory: Factory,
                                                owned: tuple[Project, Session]) -> None:
    project, owner = owned
    reply = owner.patch(_url(project), json={
        "default_concurrency": 3, "default_timeout_s": 45, "default_max_retries": 0})
    assert reply.status_code == 200, reply.json
    from assay.core.datasets.service import ensure_demo_dataset
    from assay.core.llm.service import ensure_demo_models
    from assay.seeds import demo_cases

    with db.factory() as session:
        found = session.get(Project, project.id)
        assert found is not None
        models = ensure_demo_models(session, None, found, factory.settings.fake_provider_url)
        dataset = ensure_demo_dataset(session, None, found, demo_cases())
        spec = {"dataset_id": dataset.id, "targets": (TargetSpec(models[0].id),)}
        taken = plan_run(session, None, found, RunSpec(**spec)).id
        chosen = plan_run(session, None, found, RunSpec(
            **spec, concurrency=9, timeout_s=10, max_retries=5)).id
        session.commit()
    runs = f"/api/projects/{project.id}/runs"
    settings = owner.get(f"{runs}/{taken}").json["settings"]
    assert (settings["concurrency"], settings["timeout_s"], settings["max_retries"]) == \
        (3, 45, 0)
    settings = owner.get(f"{runs}/{chosen}").json["settings"]
    assert (settings["concurrency"], settings["timeout_s"], settings["max_retries"]) == \
        (9, 10, 5)


def test_code_execution_is_off_by_default_admin_only_and_audited(
        factory: Factory, owned: tuple[Project, Session]) -> None:
    """Running model-written code is a project admin's decision, and the trail says who."""
    project, owner = owned
    assert owner.get(_url(project)).json["code_execution"] is False  # a new project: off
    editor = factory.login(factory.member(project, Role.editor))
    reply = editor.patch(_url(project), json={"code_execution": True})
    assert reply.status_code == 403 and reply.json["code"] == "FORBIDDEN"
    reply = editor.patch(f"/api/projects/{project.id}", json={"code_execution": True})
    assert reply.status_code in (403, 422)  # the project PATCH is admin-only and has no flag
    assert owner.get(_url(project)).json["code_execution"] is False
    assert _events(project) == 0
    admin_user = factory.member(project, Role.admin)
    admin = factory.login(admin_user)
    reply = admin.patch(_url(project), json={"code_execution": True})
    assert reply.status_code == 200 and reply.json["code_execution"] is True
    [event] = [e for e in _audit(owner, project) if e["action"] == "project.updated"]
    assert event["data"] == {"before": {"code_execution": False},
                             "after": {"code_execution": True}}
    assert event["description"].endswith("enabled code execution")
    with db.factory() as session:
        stored = session.scalars(select(AuditEvent).where(
            AuditEvent.project_id == project.id,
            AuditEvent.action == "project.updated")).one()
        assert stored.actor_id == admin_user.id
