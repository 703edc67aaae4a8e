"""Scorers through the API: version 1 on create, immutable numbered versions, params checked
by the kind, archive and restore, the kinds list, roles, audit; and runs that pin scorers."""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.projects.models import AuditEvent, Project, Role
from assay.core.scoring.kinds import describe, first_sentence, known_kinds
from assay.core.scoring.models import RunScorer, ScorerConfig, ScorerVersion
from assay.extensions import db
from assay.scorers import registry
from tests.factories import Factory, Session


@pytest.fixture
def owner(factory: Factory) -> tuple[Session, int]:
    user = factory.user()
    project = factory.project(user, "Scorers")
    return factory.login(user), project.id


def _url(project_id: int, tail: str = "") -> str:
    return f"/api/projects/{project_id}/scorers{tail}"


def _create(browser: Session, pid: int, **body: Any) -> dict[str, Any]:
    body = {"name": "Review", "kind": "manual", "params": {"scale": "1-5"}, **body}
    reply = browser.post(_url(pid), json=body)
    assert reply.status_code == 201, reply.json
    return dict(reply.json)


def _counts() -> tuple[int, int]:
    with db.factory() as session:
        return (session.scalar(select(func.count()).select_from(ScorerConfig)) or 0,
                session.scalar(select(func.count()).select_from(ScorerVersion)) or 0)


def _actions(pid: int) -> list[str]:
    with db.factory() as session:
        return list(session.scalars(select(AuditEvent.action).where(
            AuditEvent.project_id == pid).order_by(AuditEvent.id)))


def test_create_makes_version_1(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid, description="By hand", note="first",
                   params={"scale": "criteria", "criteria": ["accuracy", "tone"]})
    assert made["name"] == "Review" and made["kind"] == "manual"
    assert made["description"] == "By hand" and made["archived_at"] is None
    latest = made["latest"]
    assert latest["number"] == 1 and latest["note"] == "first"
    assert latest["params"] == {"scale": "criteria", "criteria": ["accuracy", "tone"]}
    assert latest["scorer_id"] == made["id"] and latest["created_by"] == browser.user_id
    assert made["versions"] == [latest]
    listed = browser.get(_url(pid)).json
    assert listed["total"] == 1 and listed["items"][0]["latest"] == latest
    assert browser.get(_url(pid, f"/{made['id']}")).json == made
    assert _actions(pid)[-1] == "scorer.created"


def test_versions_are_added_numbered_and_never_changed(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid)
    url = _url(pid, f"/{made['id']}/versions")
    second = browser.post(url, json={"params": {"scale": "pass_fail"}, "note": "second"})
    assert second.status_code == 201, second.json
    assert second.json["number"] == 2 and second.json["params"] == {"scale": "pass_fail"}
    third = browser.post(url, json={"params": {}}).json
    assert third["number"] == 3 and third["note"] is None
    detail = browser.get(_url(pid, f"/{made['id']}")).json
    assert [v["number"] for v in detail["versions"]] == [3, 2, 1]
    assert detail["latest"]["number"] == 3
    assert detail["versions"][2] == made["latest"]  # version 1 is as it was
    page = browser.get(url, query_string={"page_size": 2}).json
    assert page["total"] == 3 and [v["number"] for v in page["items"]] == [3, 2]
    assert browser.get(url, query_string={"page": 2, "page_size": 2}).json["items"] == [
        made["latest"]]
    assert _actions(pid)[-2:] == ["scorer.version_added", "scorer.version_added"]


def test_a_bad_version_changes_nothing(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid)
    before = _counts()
    reply = browser.post(_url(pid, f"/{made['id']}/versions"),
                         json={"params": {"scale": "1-10"}})
    assert reply.status_code == 422
    assert list(reply.json["errors"]["json"]) == ["params.scale"]
    assert _counts() == before
    assert browser.get(_url(pid, f"/{made['id']}")).json == made


def test_names_are_unique_per_project(owner: tuple[Session, int], factory: Factory) -> None:
    browser, pid = owner
    _create(browser, pid)
    reply = browser.post(_url(pid), json={"name": " Review ", "kind": "manual", "params": {}})
    assert reply.status_code == 409 and reply.json["code"] == "NAME_TAKEN"
    assert reply.json["errors"] == {"json": {"name": ["Name already in use"]}}
    other = factory.project(factory.user(), "Other")
    factory.scorer(other, "Review")  # another project's name is no conflict
    _create(browser, pid, name="Second")
    assert _counts() == (3, 3)


@pytest.mark.parametrize(("body", "field", "message"), [
    ({"kind": "no_such_kind"}, "kind", "Unknown scorer kind 'no_such_kind'"),
    ({"params": {"scale": "1-10"}}, "params.scale", "One of 1-5, pass_fail, criteria"),
    ({"params": {"scale": "criteria"}}, "params.criteria", "1 to 10 distinct"),
    ({"params": {"scale": "criteria", "criteria": ["a", "a"]}}, "params.criteria",
     "1 to 10 distinct"),
    ({"params": {"scale": "1-5", "criteria": ["a"]}}, "params.criteria",
     "Only with scale"),
    ({"params": {"colour": "red"}}, "params.params", "Unknown fields: colour"),
    ({"params": None}, "params", "Field may not be null."),
    ({"params": []}, "params", "Not a valid mapping type."),
    ({"params": {"": 1}}, "params", "Length must be between 1 and 64."),
    ({"name": "   "}, "name", "Must not be blank."),
    ({"name": "x" * 101}, "name", "Length must be between 1 and 100."),
    ({"kind": ""}, "kind", "Length must be between 1 and 32."),
    ({"description": "x" * 2001}, "description", "Longer than maximum length 2000."),
    ({"note": "x" * 501}, "note", "Longer than maximum length 500."),
])
def test_bad_scorers_are_refused_with_the_field(owner: tuple[Session, int],
                                                body: dict[str, Any], field: str,
                                                message: str) -> None:
    browser, pid = owner
    reply = browser.post(_url(pid), json={"name": "Review", "kind": "manual",
                                          "params": {}, **body})
    assert reply.status_code == 422, reply.json
    assert reply.json["code"] == "VALIDATION_ERROR"
    errors = reply.json["errors"]["json"]
    assert list(errors) == [field], errors
    assert message in str(errors[field]), errors
    assert _counts() == (0, 0)


@pytest.mark.parametrize(("params", "field", "message"), [
    ({"pattern": "("}, "params.pattern", "Invalid regular expression"),
    ({}, "params.pattern", "Missing required field"),
    ({"pattern": "a", "bogus": 1}, "params.bogus", "Unknown field"),
])
def test_each_kind_checks_its_own_params(owner: tuple[Session, int], params: dict[str, Any],
                                         field: str, message: str) -> None:
    browser, pid = owner
    reply = browser.post(_url(pid), json={"name": "Pattern", "kind": "regex",
                                          "params": params})
    assert reply.status_code == 422, reply.json
    assert list(reply.json["errors"]["json"]) == [field]
    assert message in reply.json["errors"]["json"][field][0]
    made = _create(browser, pid, name="Pattern", kind="regex", params={"pattern": "^A"})
    assert made["kind"] == "regex" and made["latest"]["params"] == {"pattern": "^A"}
    reply = browser.post(_url(pid, f"/{made['id']}/versions"), json={"params": params})
    assert reply.status_code == 422 and list(reply.json["errors"]["json"]) == [field]
    assert _counts() == (1, 1)


def test_params_are_required(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    reply = browser.post(_url(pid), json={"name": "Review", "kind": "manual"})
    assert reply.status_code == 422
    assert reply.json["errors"]["json"] == {"params": ["Missing data for required field."]}
    made = _create(browser, pid)
    reply = browser.post(_url(pid, f"/{made['id']}/versions"), json={"note": "no params"})
    assert reply.status_code == 422 and list(reply.json["errors"]["json"]) == ["params"]


def test_archive_hides_and_restore_shows(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid)
    archived = browser.post(_url(pid, f"/{made['id']}/archive"))
    assert archived.status_code == 200 and archived.json["archived_at"] is not None
    again = browser.post(_url(pid, f"/{made['id']}/archive")).json
    assert again["archived_at"] == archived.json["archived_at"]  # idempotent
    assert browser.get(_url(pid)).json["total"] == 0
    listed = browser.get(_url(pid), query_string={"include_archived": "true"}).json
    assert [s["id"] for s in listed["items"]] == [made["id"]]
    restored = browser.post(_url(pid, f"/{made['id']}/restore")).json
    assert restored["archived_at"] is None and restored["versions"] == made["versions"]
    assert browser.get(_url(pid)).json["total"] == 1
    assert browser.post(_url(pid, f"/{made['id']}/restore")).status_code == 200
    assert _actions(pid)[-3:] == ["scorer.created", "scorer.archived", "scorer.restored"]


def test_the_list_filters_by_kind_newest_first(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    first = _create(browser, pid, name="First")
    second = _create(browser, pid, name="Second")
    listed = browser.get(_url(pid)).json
    assert [s["id"] for s in listed["items"]] == [second["id"], first["id"]]
    assert browser.get(_url(pid), query_string={"kind": "manual"}).json["total"] == 2
    assert browser.get(_url(pid), query_string={"kind": "regex"}).json == {
        "items": [], "total": 0, "page": 1, "page_size": 20}
    reply = browser.get(_url(pid), query_string={"kind": "k" * 33})
    assert reply.status_code == 422 and "kind" in reply.json["errors"]["query"]


def test_scorers_of_another_project_are_not_found(owner: tuple[Session, int],
                                                  factory: Factory) -> None:
    browser, pid = owner
    other = factory.project(factory.user(), "Other")
    scorer_id, _ = factory.scorer(other)
    for method, tail in (("GET", ""), ("GET", "/versions"), ("POST", "/archive"),
                         ("POST", "/restore")):
        reply = browser.request(method, _url(pid, f"/{scorer_id}{tail}"))
        assert reply.status_code == 404 and reply.json["code"] == "NOT_FOUND", (method, tail)
    reply = browser.post(_url(pid, f"/{scorer_id}/versions"), json={"params": {}})
    assert reply.status_code == 404
    assert _counts() == (1, 1)


def test_viewers_read_and_editors_write(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Roles")
    scorer_id, _ = factory.scorer(project)
    for role, allowed in ((Role.viewer, False), (Role.reviewer, False), (Role.editor, True)):
        browser = factory.login(factory.member(project, role))
        assert browser.get(_url(project.id)).status_code == 200
        assert browser.get(_url(project.id, f"/{scorer_id}")).status_code == 200
        writes = [browser.post(_url(project.id), json={
                      "name": f"By {role}", "kind": "manual", "params": {}}),
                  browser.post(_url(project.id, f"/{scorer_id}/versions"),
                               json={"params": {}}),
                  browser.post(_url(project.id, f"/{scorer_id}/archive")),
                  browser.post(_url(project.id, f"/{scorer_id}/restore"))]
        expected = [201, 201, 200, 200] if allowed else [403] * 4
        assert [w.status_code for w in writes] == expected, role


# --- kinds ----------------------------------------------------------------------------------


def test_the_kinds_list_every_registered_kind(factory: Factory) -> None:
    browser = factory.signed_in()
    kinds = browser.get("/api/scorer-kinds").json
    assert [k["kind"] for k in kinds] == sorted(registry.kinds())
    modes = {k["kind"]: k["mode"] for k in kinds}
    assert (modes["manual"], modes["pairwise_judge"], modes["regex"]) == (
        "manual", "pairwise", "automatic")
    described = {k["kind"]: (k["name"], k["description"]) for k in kinds}
    assert described["manual"] == ("Human review",
                                   "People score the answers by hand on the review page.")
    assert described["rules"][0] == "Conversation rules"
    assert all(k["name"] and k["name"] != k["kind"] for k in kinds)  # a human name each
    assert all(k["description"] and "\n" not in k["description"] for k in kinds)
    # what users read names no spec, requirement or code identifier
    internal = re.compile(r"FR-[A-Z]{2}-\d|edison|rag-eval|RAGMetrics|rules_dsl|ScoreResult|"
                          r"myarena|evalarena|§|kind \"|`", re.IGNORECASE)
    assert [k["kind"] for k in kinds if internal.search(k["name"] + k["description"])] == []
    assert kinds == [asdict(k) for k in known_kinds()]


def test_the_kinds_need_a_signed_in_user(app: Any) -> None:
    reply = app.test_client().get("/api/scorer-kinds")
    assert reply.status_code == 401 and reply.json["code"] == "UNAUTHORIZED"


@pytest.mark.parametrize(("doc", "line"), [
    ("The output equals `value`.", "The output equals `value`."),
    ("One line\n    wrapped over two. Then more.\n\n    A paragraph.",
     "One line wrapped over two."),
    ("Names the judge (e.g. gpt-4o). Then more.", "Names the judge (e.g. gpt-4o)."),
    ("No full stop at all", "No full stop at all"),
    (None, ""),
])
def test_a_kind_is_described_by_its_first_sentence(doc: str | None, line: str) -> None:
    assert first_sentence(doc) == line


class _Documented:
    """Checks the output. More words."""


class _Inherits(_Documented):
    pass


class _ParamsFirst:
    """params: {"x": 1}. Building it checks x."""


def test_a_kind_without_its_own_description_takes_its_modules() -> None:
    module_line = first_sentence(__doc__)
    assert module_line.startswith("Scorers through the API:")
    assert describe(_Documented) == "Checks the output."
    assert describe(_Inherits) == module_line  # a base class's docstring is not its own
    assert describe(_ParamsFirst) == module_line


# --- runs pin scorers -----------------------------------------------------------------------


def _run_body(factory: Factory, project: Project, owner: Any) -> dict[str, Any]:
    """A valid run body: the demo dataset on the demo models (a finished demo run made
    them)."""
    run_id = factory.finished_run(owner, project)
    run = factory.login(owner).get(f"/api/projects/{project.id}/runs/{run_id}").json
    return {"dataset_id": run["dataset_id"],
            "targets": [{"model_id": t["model_id"]} for t in run["targets"]]}


def _runs() -> int:
    with db.factory() as session:
        from assay.core.runs.models import Run

        return session.scalar(select(func.count()).select_from(Run)) or 0


def test_a_run_pins_the_latest_version_of_each_scorer(factory: Factory) -> None:
    user = factory.user()
    project = factory.project(user, "Pinning")
    browser = factory.login(user)
    body = _run_body(factory, project, user)
    first_id, _ = factory.scorer(project, "First")
    second_id, _ = factory.scorer(project, "Second")
    second_v2 = browser.post(_url(project.id, f"/{second_id}/versions"),
                             json={"params": {"scale": "pass_fail"}}).json
    reply = browser.post(f"/api/projects/{project.id}/runs",
                         json={**body, "scorer_ids": [second_id, first_id]})
    assert reply.status_code == 202, reply.json
    run = reply.json
    first_v1 = browser.get(_url(project.id, f"/{first_id}")).json["latest"]
    assert run["scorers"] == [
        {"scorer_version_id": second_v2["id"], "scorer_id": second_id, "name": "Second",
         "kind": "manual", "version": 2},
        {"scorer_version_id": first_v1["id"], "scorer_id": first_id, "name": "First",
         "kind": "manual", "version": 1}]
    browser.post(_url(project.id, f"/{first_id}/versions"), json={"params": {}})
    detail = browser.get(f"/api/projects/{project.id}/runs/{run['id']}").json
    assert detail["scorers"] == run["scorers"]  # a new version changes no run
    listed = browser.get(f"/api/projects/{project.id}/runs").json["items"]
    assert next(r for r in listed if r["id"] == run["id"])["scorers"] == run["scorers"]
    assert all(r["scorers"] == [] for r in listed if r["id"] != run["id"])
    with db.factory() as session:
        pinned = session.execute(select(RunScorer.scorer_version_id, RunScorer.position)
                                 .where(RunScorer.run_id == run["id"])
                                 .order_by(RunScorer.position)).all()
    assert [tuple(p) for p in pinned] == [(second_v2["id"], 0), (first_v1["id"], 1)]


def test_a_run_refuses_unknown_archived_and_repeated_scorers(factory: Factory) -> None:
    user = factory.user()
    project = factory.project(user, "Refusing")
    browser = factory.login(user)
    body = _run_body(factory, project, user)
    kept_id, _ = factory.scorer(project, "Kept")
    archived_id, _ = factory.scorer(project, "Gone")
    assert browser.post(_url(project.id, f"/{archived_id}/archive")).status_code == 200
    foreign_id, _ = factory.scorer(factory.project(factory.user(), "Other"), "Theirs")
    runs = _runs()
    cases = [
        ([kept_id, foreign_id], {"1": [f"No scorer {foreign_id} in this project"]}),
        ([2_000_000_000], {"0": ["No scorer 2000000000 in this project"]}),
        ([archived_id], {"0": ["The scorer 'Gone' is archived"]}),
        ([kept_id, kept_id], {"scorer_ids": ["Each scorer at most once"]}),
    ]
    for ids, problems in cases:
        for tail in ("", "/estimate"):
            reply = browser.post(f"/api/projects/{project.id}/runs{tail}",
                                 json={**body, "scorer_ids": ids})
            assert reply.status_code == 422, (ids, tail, reply.json)
            assert reply.json["errors"] == {"json": {"scorer_ids": problems}}, reply.json
    for bad in (list(range(1, 22)), [0], ["1"], [1.5], None, "1"):
        reply = browser.post(f"/api/projects/{project.id}/runs",
                             json={**body, "scorer_ids": bad})
        assert reply.status_code == 422 and "scorer_ids" in reply.json["errors"]["json"], bad
    assert _runs() == runs
    reply = browser.post(f"/api/projects/{project.id}/runs/estimate",
                         json={**body, "scorer_ids": [kept_id]})
    assert reply.status_code == 200 and reply.json["problems"] == []
