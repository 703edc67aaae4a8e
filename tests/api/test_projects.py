"""Projects: create with a unique kebab-case slug, list (paginated, searched, filtered by
role, most recently updated first), read, update, delete."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from assay.core.projects.models import Membership, Project, Role
from assay.extensions import db
from tests.factories import Factory, Session, race


def _create(browser: Session, name: str, description: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if description is not None:
        body["description"] = description
    reply = browser.post("/api/projects", json=body)
    assert reply.status_code == 201, reply.json
    assert reply.json is not None
    return reply.json


def _list(browser: Session, **query: Any) -> dict[str, Any]:
    reply = browser.get("/api/projects", query_string=query)
    assert reply.status_code == 200, reply.json
    assert reply.json is not None
    return reply.json


def _names(page: dict[str, Any]) -> list[str]:
    return [item["name"] for item in page["items"]]


def test_create_returns_the_project_with_the_creator_as_owner(factory: Factory) -> None:
    browser = factory.signed_in()
    made = _create(browser, "Support Bot", "Evals for the support bot")
    assert made["name"] == "Support Bot" and made["slug"] == "support-bot"
    assert made["description"] == "Evals for the support bot"
    assert made["role"] == "owner" and made["member_count"] == 1
    with db.factory() as session:
        member = session.scalar(select(Membership).where(Membership.project_id == made["id"]))
    assert member is not None
    assert member.user_id == browser.user_id and member.role == Role.owner


@pytest.mark.parametrize(("name", "slug"), [
    ("My Cool Project", "my-cool-project"),
    ("  Padded  name  ", "padded-name"),
    ("snake_case_name", "snakecasename"),
    ("Dashes -- and   spaces", "dashes-and-spaces"),
    ("UPPER 123", "upper-123"),
    ("-leading and trailing-", "leading-and-trailing"),
    ("x" * 100, "x" * 50),
])
def test_slug_is_kebab_case(factory: Factory, name: str, slug: str) -> None:
    assert _create(factory.signed_in(), name)["slug"] == slug


def test_slugs_get_unique_suffixes(factory: Factory) -> None:
    first, second = factory.signed_in(), factory.signed_in()
    assert _create(first, "Eval Suite")["slug"] == "eval-suite"
    assert _create(second, "Eval Suite")["slug"] == "eval-suite-1"  # unique across users
    assert _create(first, "eval suite")["slug"] == "eval-suite-2"
    assert _create(first, "Eval  Suite 3")["slug"] == "eval-suite-3"
    assert _create(first, "Eval Suite")["slug"] == "eval-suite-4"
    with db.factory() as session:
        slugs = list(session.scalars(select(Project.slug)))
    assert len(slugs) == len(set(slugs)) == 5


def test_a_name_that_only_prefixes_another_slug_keeps_its_own(factory: Factory) -> None:
    browser = factory.signed_in()
    assert _create(browser, "Eval Suite Extra")["slug"] == "eval-suite-extra"
    assert _create(browser, "Eval Suite")["slug"] == "eval-suite"


def test_list_is_paginated_with_the_total(factory: Factory) -> None:
    browser = factory.signed_in()
    for i in range(25):
        _create(browser, f"Project {i:02d}")
    first = _list(browser)
    assert first["total"] == 25 and first["page"] == 1 and first["page_size"] == 20
    assert len(first["items"]) == 20
    second = _list(browser, page=2)
    assert second["total"] == 25 and len(second["items"]) == 5
    small = _list(browser, page=3, page_size=10)
    assert small["total"] == 25 and len(small["items"]) == 5 and small["page_size"] == 10
    everything = _names(first) + _names(second)
    assert sorted(everything) == [f"Project {i:02d}" for i in range(25)]
    beyond = _list(browser, page=4, page_size=10)
    assert beyond["items"] == [] and beyond["total"] == 25


def test_list_is_sorted_by_last_update_first(factory: Factory) -> None:
    browser = factory.signed_in()
    made = {name: _create(browser, name) for name in ("Alpha", "Bravo", "Charlie")}
    assert _names(_list(browser)) == ["Charlie", "Bravo", "Alpha"]
    reply = browser.patch(f"/api/projects/{made['Alpha']['id']}",
                          json={"description": "now the freshest"})
    assert reply.status_code == 200
    assert _names(_list(browser)) == ["Alpha", "Charlie", "Bravo"]
    newcomer = factory.user()
    reply = browser.post(f"/api/projects/{made['Bravo']['id']}/members",
                         json={"email": newcomer.email, "role": "viewer"})
    assert reply.status_code == 201
    page = _list(browser)
    assert _names(page) == ["Bravo", "Alpha", "Charlie"]
    stamps = [item["updated_at"] for item in page["items"]]
    assert stamps == sorted(stamps, reverse=True)


def test_list_shows_only_my_projects_with_my_role_and_member_count(factory: Factory) -> None:
    me, other = factory.user(), factory.user()
    mine = factory.project(me, "Mine")
    shared = factory.project(other, "Shared")
    factory.project(other, "Not mine")
    with db.factory() as session:
        session.add(Membership(project_id=shared.id, user_id=me.id, role=Role.editor))
        session.commit()
    page = _list(factory.login(me))
    assert page["total"] == 2
    by_name = {item["name"]: item for item in page["items"]}
    assert set(by_name) == {"Mine", "Shared"}
    assert by_name["Mine"]["role"] == "owner" and by_name["Mine"]["member_count"] == 1
    assert by_name["Shared"]["role"] == "editor" and by_name["Shared"]["member_count"] == 2
    assert by_name["Mine"]["id"] == mine.id


def test_search_by_name_is_case_insensitive(factory: Factory) -> None:
    browser = factory.signed_in()
    for name in ("Alpha Project", "ALPHA two", "my alphabet", "Beta"):
        _create(browser, name)
    found = _list(browser, q="alpha")
    assert sorted(_names(found)) == ["ALPHA two", "Alpha Project", "my alphabet"]
    assert found["total"] == 3
    assert _names(_list(browser, q="BETA")) == ["Beta"]
    assert _list(browser, q="gamma")["total"] == 0


@pytest.mark.parametrize("query", ["%", "_", "a%a"])
def test_search_treats_wildcards_literally(factory: Factory, query: str) -> None:
    browser = factory.signed_in()
    _create(browser, "plain")
    _create(browser, "abc")
    assert _list(browser, q=query)["total"] == 0


def test_search_with_an_underscore_matches_only_underscores(factory: Factory) -> None:
    browser = factory.signed_in()
    _create(browser, "snake_case")
    _create(browser, "snakecase")
    assert _names(_list(browser, q="e_c")) == ["snake_case"]


def test_filter_by_role(factory: Factory) -> None:
    me, other = factory.user(), factory.user()
    factory.project(me, "Owned")
    roles = {Role.viewer: "Watched", Role.editor: "Edited", Role.admin: "Administered"}
    with db.factory() as session:
        for role, name in roles.items():
            project = factory.project(other, name)
            session.add(Membership(project_id=project.id, user_id=me.id, role=role))
        session.commit()
    browser = factory.login(me)
    assert _names(_list(browser, role="owner")) == ["Owned"]
    for role, name in roles.items():
        page = _list(browser, role=role.value)
        assert _names(page) == [name] and page["total"] == 1
        assert page["items"][0]["role"] == role.value
    assert _list(browser, role="reviewer")["total"] == 0
    assert _list(browser)["total"] == 4
    assert _names(_list(browser, role="editor", q="edit")) == ["Edited"]
    assert _list(browser, role="editor", q="watch")["total"] == 0
    reply = browser.get("/api/projects?role=superuser")
    assert reply.status_code == 422 and reply.json is not None
    assert "role" in reply.json["errors"]["query"]


def test_get_returns_the_project_with_my_role(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Readable")
    viewer = factory.member(project, Role.viewer)
    reply = factory.login(viewer).get(f"/api/projects/{project.id}")
    assert reply.status_code == 200 and reply.json is not None
    assert reply.json["name"] == "Readable" and reply.json["slug"] == "readable"
    assert reply.json["role"] == "viewer" and reply.json["member_count"] == 2


def test_get_an_unknown_project_is_404(factory: Factory) -> None:
    reply = factory.signed_in().get("/api/projects/4242")
    assert reply.status_code == 404 and reply.json is not None
    assert reply.json["code"] == "NOT_FOUND"


def test_patch_updates_name_and_description(factory: Factory) -> None:
    browser = factory.signed_in()
    made = _create(browser, "Before", "old words")
    url = f"/api/projects/{made['id']}"
    reply = browser.patch(url, json={"name": "After"})
    assert reply.status_code == 200 and reply.json is not None
    assert reply.json["name"] == "After" and reply.json["description"] == "old words"
    assert reply.json["updated_at"] > made["updated_at"]
    reply = browser.patch(url, json={"description": "new words"})
    assert reply.json is not None
    assert reply.json["name"] == "After" and reply.json["description"] == "new words"
    reply = browser.patch(url, json={"description": None})
    assert reply.json is not None and reply.json["description"] is None
    fetched = browser.get(url).json
    assert fetched is not None
    assert fetched["name"] == "After" and fetched["description"] is None
    assert fetched["created_at"] == made["created_at"]


@pytest.mark.parametrize("body", [{"name": ""}, {"name": "bad/char"}, {"name": "   "},
                                  {"name": None}, {"description": "x" * 1001}])
def test_patch_rejects_invalid_values(factory: Factory, body: dict[str, Any]) -> None:
    browser = factory.signed_in()
    made = _create(browser, "Stable", "kept")
    reply = browser.patch(f"/api/projects/{made['id']}", json=body)
    assert reply.status_code == 422 and reply.json is not None
    assert next(iter(body)) in reply.json["errors"]["json"]
    fetched = browser.get(f"/api/projects/{made['id']}").json
    assert fetched is not None
    assert fetched["name"] == "Stable" and fetched["description"] == "kept"


def _purge_deleted() -> None:
    """The retention job with no grace period left: deleted projects are purged."""
    from assay.core.retention.policy import RetentionPolicy
    from assay.jobs.retention import retention
    from assay.runtime import current

    retention(current(), RetentionPolicy(raw_days=0, events_days=0, project_grace_days=0),
              dry_run=False)


def test_delete_hides_the_project_at_once_and_the_purge_removes_it(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Doomed")
    keep = factory.project(owner, "Kept")
    factory.member(project, Role.editor)
    browser = factory.login(owner)
    assert browser.delete(f"/api/projects/{project.id}").status_code == 204
    assert browser.get(f"/api/projects/{project.id}").status_code == 404
    assert _names(_list(browser)) == ["Kept"]
    assert browser.delete(f"/api/projects/{project.id}").status_code == 404

    def memberships() -> int:
        with db.factory() as session:
            return session.scalar(select(func.count()).select_from(Membership).where(
                Membership.project_id == project.id)) or 0

    assert memberships() == 2  # kept through the grace period
    _purge_deleted()
    assert memberships() == 0
    with db.factory() as session:
        assert session.get(Project, project.id) is None
        assert session.get(Project, keep.id) is not None


def test_delete_a_project_with_runs_datasets_and_models(factory: Factory) -> None:
    """Everything inside goes with it (on PostgreSQL too), and nothing of another project."""
    owner = factory.user()
    doomed, kept = factory.project(owner, "Doomed"), factory.project(owner, "Kept")
    factory.finished_run(owner, doomed, execute=True)
    factory.finished_run(owner, kept, execute=True)
    before = _table_counts()
    assert before["outputs"] > 0 and before["cases"] > 0 and before["model_configs"] > 0
    browser = factory.login(owner)
    assert browser.delete(f"/api/projects/{doomed.id}").status_code == 204
    _purge_deleted()
    after = _table_counts()
    for table in ("runs", "run_targets", "outputs", "datasets", "dataset_versions", "cases",
                  "version_cases", "model_configs", "credentials", "memberships"):
        assert after[table] * 2 == before[table], table  # exactly the kept project's half
    kept_run = browser.get(f"/api/projects/{kept.id}/runs").json
    assert kept_run is not None and kept_run["total"] == 1


def _table_counts() -> dict[str, int]:
    with db.factory() as session:
        return {table.name: session.scalar(select(func.count()).select_from(table)) or 0
                for table in db.metadata.sorted_tables}


@pytest.mark.parametrize("name", ["", "   ", "no/slashes", "emoji 🙂", "x" * 101, "dot.name"])
def test_create_rejects_invalid_names(factory: Factory, name: str) -> None:
    browser = factory.signed_in()
    reply = browser.post("/api/projects", json={"name": name})
    assert reply.status_code == 422 and reply.json is not None
    assert "name" in reply.json["errors"]["json"]
    assert _list(browser)["total"] == 0


def test_projects_created_at_once_with_the_same_name_get_distinct_slugs(
        app: Flask, factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both requests pick the same free slug before either inserts (a double click)."""
    owner = factory.user()
    token = factory.api_token(owner)
    replies = race(app, monkeypatch, "assay.core.projects.service.unique_slug",
                   [("POST", "/api/projects", {"name": "Same Name"})] * 2,
                   headers={"Authorization": f"Bearer {token}"})
    assert [r.status_code for r in replies] == [201, 201], [r.json for r in replies]
    assert sorted(r.json["slug"] for r in replies) == ["same-name", "same-name-1"]  # type: ignore[index]
    page = _list(factory.login(owner))
    assert page["total"] == 2 and all(item["role"] == "owner" for item in page["items"])


def test_patch_without_changes_writes_nothing(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Same")
    browser = factory.login(owner)
    before = browser.get(f"/api/projects/{project.id}").json
    audit = browser.get(f"/api/projects/{project.id}/audit").json["total"]
    assert browser.patch(f"/api/projects/{project.id}", json={}).status_code == 422
    reply = browser.patch(f"/api/projects/{project.id}", json={"name": "Same"})
    assert reply.status_code == 200 and reply.json == before
    assert browser.get(f"/api/projects/{project.id}/audit").json["total"] == audit


def test_the_api_writes_its_bodies_with_orjson(factory: Factory) -> None:
    """api/json_bodies.py serves the API: text beyond ASCII comes as UTF-8, unescaped."""
    browser = factory.signed_in()
    _create(browser, "Cafe", description="Café 日本")
    reply = browser.get("/api/projects")
    assert "Café 日本".encode() in reply.get_data()
    assert reply.json["items"][0]["description"] == "Café 日本"
