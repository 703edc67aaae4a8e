"""Datasets, cases and versions through the API: every kind, copy-on-write versions, diff,
search and filters, delete refused when runs pinned a version, audit of each change."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.datasets.models import Case, Dataset
from assay.core.projects.models import AuditEvent, Role
from assay.extensions import db
from tests.factories import Factory, Session


@pytest.fixture
def owner(factory: Factory) -> tuple[Session, int]:
    user = factory.user()
    project = factory.project(user, "Data")
    return factory.login(user), project.id


def _url(project_id: int, tail: str = "") -> str:
    return f"/api/projects/{project_id}/datasets{tail}"


def _create(browser: Session, project_id: int, **body: Any) -> dict[str, Any]:
    body = {"name": "QA", "kind": "questions", **body}
    reply = browser.post(_url(project_id), json=body)
    assert reply.status_code == 201, reply.json
    return dict(reply.json)


QUESTION = {"input": {"question": "What is 2+2?"}, "tags": ["math"], "difficulty": "easy"}
CASES = {
    "questions": QUESTION,
    "cases": {"input": {"city": "Paris", "topic": "food"}, "expected": {"output": "Croissant"}},
    "conversations": {"input": {"messages": [
        {"role": "user", "content": "Hi, what is RAG?"},
        {"role": "assistant", "content": "Retrieval augmented generation."},
        {"role": "user", "content": "Why use it?"}]},
        "expected": {"turns": ["Retrieval augmented generation", "Grounded answers"]}},
    "traces": {"trace": {"messages": [
        {"role": "system", "content": "You are an agent"},
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "3C"},
        {"role": "assistant", "content": "3C in Oslo"}]}},
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_create_each_kind_with_initial_cases(owner: tuple[Session, int], kind: str) -> None:
    browser, pid = owner
    made = _create(browser, pid, name=f"K {kind}", kind=kind, description="d",
                   cases=[CASES[kind]])
    assert (made["kind"], made["version"], made["case_count"]) == (kind, 1, 1)
    cases = browser.get(_url(pid, f"/{made['id']}/cases")).json
    assert cases["total"] == 1 and cases["items"][0]["position"] == 0


BAD = {
    "questions": [{"input": {}}, {"input": {"question": "  "}}, {"input": {"question": 3}},
                  {"input": {"question": "q"}, "difficulty": "extreme"},
                  {"input": {"question": "q"}, "trace": {"messages": []}}],
    "cases": [{"input": {}}, {"input": {"bad name": "x"}}, {"input": {"a": 1}},
              {"input": {"a": "x"}, "expected": {"other": "y"}}],
    "conversations": [
        {"input": {"messages": [{"role": "user", "content": "Q"}]}, "expected": {"turns": []}},
        {"input": {"messages": []}, "expected": {"turns": []}},
        {"input": {"messages": [{"role": "robot", "content": "Q"}]},
         "expected": {"turns": ["A"]}},
        {"input": {"messages": [{"role": "user", "content": f"Q{i}"} for i in range(11)]},
         "expected": {"turns": ["A"] * 11}}],
    "traces": [{"trace": {}}, {"trace": {"messages": [{"role": "tool", "content": "x"}]}},
               {"trace": {"messages": [{"role": "bot", "content": "x"}]}}],
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_cases_of_the_wrong_shape_are_field_errors(owner: tuple[Session, int],
                                                   kind: str) -> None:
    browser, pid = owner
    for index, bad in enumerate(BAD[kind]):
        reply = browser.post(_url(pid), json={"name": f"Bad {index}", "kind": kind,
                                              "cases": [CASES[kind], bad]})
        assert reply.status_code == 422, (bad, reply.json)
        assert list(reply.json["errors"]["json"]["cases"]) == ["1"], (bad, reply.json)
    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(Dataset)) == 0


def test_names_are_unique_per_project(owner: tuple[Session, int], factory: Factory) -> None:
    browser, pid = owner
    _create(browser, pid)
    reply = browser.post(_url(pid), json={"name": "QA", "kind": "cases"})
    assert reply.status_code == 409 and reply.json["code"] == "NAME_TAKEN"
    other = _create(browser, pid, name="Other")
    reply = browser.patch(_url(pid, f"/{other['id']}"), json={"name": "QA"})
    assert reply.status_code == 409
    elsewhere = factory.project(factory.user(), "Elsewhere")
    assert elsewhere.id != pid


def test_list_search_filters_and_archive(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    a = _create(browser, pid, name="Alpha", description="About cooking", cases=[QUESTION])
    _create(browser, pid, name="Beta", kind="cases", cases=[CASES["cases"]])

    def names(**query: Any) -> list[str]:
        reply = browser.get(_url(pid), query_string=query)
        assert reply.status_code == 200, reply.json
        return sorted(item["name"] for item in reply.json["items"])

    assert names() == ["Alpha", "Beta"]
    assert names(q="cook") == ["Alpha"] and names(q="BET") == ["Beta"]
    assert names(kind="cases") == ["Beta"]
    assert names(tag="math") == ["Alpha"] and names(tag="mat") == []
    reply = browser.post(_url(pid, f"/{a['id']}/archive"))
    assert reply.status_code == 200 and reply.json["archived_at"]
    assert names() == ["Beta"] and names(include_archived="true") == ["Alpha", "Beta"]
    assert browser.post(_url(pid, f"/{a['id']}/restore")).json["archived_at"] is None
    assert names() == ["Alpha", "Beta"]
    got = browser.get(_url(pid, f"/{a['id']}")).json
    assert (got["version"], got["case_count"], got["description"]) == (1, 1, "About cooking")


def _case_rows() -> int:
    with db.factory() as session:
        return session.scalar(select(func.count()).select_from(Case)) or 0


def test_each_change_is_a_new_version_sharing_unchanged_cases(
        owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid, cases=[
        {"input": {"question": f"Q{i}"}, "tags": ["t"] if i % 2 else []} for i in range(5)])
    base = _url(pid, f"/{made['id']}")
    assert _case_rows() == 5
    added = browser.post(base + "/cases", json={"input": {"question": "New"},
                                                "note": "one more"})
    assert added.status_code == 201, added.json
    assert added.json["version"]["number"] == 2 and added.json["version"]["case_count"] == 6
    assert added.json["case"]["position"] == 5 and _case_rows() == 6  # no copies

    first = browser.get(base + "/cases").json["items"][0]
    edited = browser.patch(base + f"/cases/{first['id']}",
                           json={"input": {"question": "Q0 edited"}, "difficulty": "hard"})
    assert edited.status_code == 200, edited.json
    assert edited.json["case"]["id"] != first["id"] and edited.json["case"]["position"] == 0
    assert edited.json["version"]["number"] == 3 and _case_rows() == 7

    second = browser.get(base + "/cases").json["items"][1]
    deleted = browser.delete(base + f"/cases/{second['id']}")
    assert deleted.status_code == 200 and deleted.json["version"]["case_count"] == 5
    assert _case_rows() == 7  # the old versions keep it

    # older versions are intact
    v1 = browser.get(base + "/cases", query_string={"version": 1}).json
    assert [c["input"]["question"] for c in v1["items"]] == [f"Q{i}" for i in range(5)]
    latest = browser.get(base + "/cases", query_string={"page_size": 100}).json
    assert [c["input"]["question"] for c in latest["items"]] == [
        "Q0 edited", "Q2", "Q3", "Q4", "New"]
    # an edit of a case not in the latest version (deleted here) is a stale write
    stale = browser.patch(base + f"/cases/{second['id']}", json={"tags": []})
    assert stale.status_code == 412 and stale.json["current"] is None
    assert browser.get(base + "/cases", query_string={"version": 9}).status_code == 404

    versions = browser.get(base + "/versions").json
    assert [v["number"] for v in versions["items"]] == [4, 3, 2, 1]
    assert versions["items"][2]["note"] == "one more"
    assert versions["items"][0]["created_by"] == browser.user_id

    diff = browser.get(base + "/diff", query_string={"from": 1, "to": 4}).json
    assert [c["input"]["question"] for c in diff["added"]] == ["New"]
    assert [c["input"]["question"] for c in diff["removed"]] == ["Q1"]
    assert [(c["before"]["input"]["question"], c["after"]["input"]["question"])
            for c in diff["changed"]] == [("Q0", "Q0 edited")]
    latest_diff = browser.get(base + "/diff").json  # 3 -> 4
    assert latest_diff["removed"] and not latest_diff["added"] and not latest_diff["changed"]

    with db.factory() as session:
        actions = list(session.scalars(select(AuditEvent.action).where(
            AuditEvent.project_id == pid).order_by(AuditEvent.id)))
    assert actions[-4:] == ["dataset.created", "dataset.case_added", "dataset.case_edited",
                            "dataset.case_deleted"]


def test_case_search_and_filters(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid, cases=[
        {"input": {"question": "Capital of France?"}, "tags": ["geo"], "difficulty": "easy"},
        {"input": {"question": "Integral of x?"}, "tags": ["math"], "difficulty": "hard"},
        {"input": {"question": "Capital of Peru?"}, "tags": ["geo", "hard-one"],
         "difficulty": "hard"}])
    base = _url(pid, f"/{made['id']}/cases")

    def questions(**query: Any) -> list[str]:
        reply = browser.get(base, query_string=query)
        assert reply.status_code == 200, reply.json
        return [c["input"]["question"] for c in reply.json["items"]]

    assert questions(q="capital") == ["Capital of France?", "Capital of Peru?"]
    assert questions(tag="geo") == ["Capital of France?", "Capital of Peru?"]
    assert questions(difficulty="hard") == ["Integral of x?", "Capital of Peru?"]
    assert questions(tag="geo", difficulty="hard") == ["Capital of Peru?"]
    assert questions(page_size=1, page=2) == ["Integral of x?"]


def test_delete_is_refused_when_a_run_used_it(owner: tuple[Session, int],
                                              factory: Factory) -> None:
    browser, pid = owner
    unused = _create(browser, pid, cases=[QUESTION])
    assert browser.delete(_url(pid, f"/{unused['id']}")).status_code == 204
    assert browser.get(_url(pid, f"/{unused['id']}")).status_code == 404

    user = factory.user()
    project = factory.project(user, "Ran")
    factory.finished_run(user, project)
    runner = factory.login(user)
    used = runner.get(_url(project.id)).json["items"][0]
    reply = runner.delete(_url(project.id, f"/{used['id']}"))
    assert reply.status_code == 409 and reply.json["code"] == "DATASET_IN_USE"
    assert "archive" in reply.json["message"]
    assert runner.post(_url(project.id, f"/{used['id']}/archive")).status_code == 200


def test_viewers_read_and_editors_write(owner: tuple[Session, int], factory: Factory) -> None:
    browser, pid = owner
    made = _create(browser, pid, cases=[QUESTION])
    with db.factory() as session:
        from assay.core.projects.models import Project

        project = session.get(Project, pid)
        assert project is not None
    viewer = factory.login(factory.member(project, Role.viewer))
    assert viewer.get(_url(pid, f"/{made['id']}/cases")).status_code == 200
    reply = viewer.post(_url(pid, f"/{made['id']}/cases"), json=QUESTION)
    assert reply.status_code == 403
    editor = factory.login(factory.member(project, Role.editor))
    assert editor.post(_url(pid, f"/{made['id']}/cases"), json=QUESTION).status_code == 201


def test_a_version_number_taken_meanwhile_is_a_conflict(owner: tuple[Session, int],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two changes read the same latest version: the second one's number is taken (on
    PostgreSQL the dataset row lock makes them queue instead)."""
    from assay.core.datasets import service

    browser, pid = owner
    made = _create(browser, pid, cases=[QUESTION])
    base = _url(pid, f"/{made['id']}")
    assert browser.post(base + "/cases", json=QUESTION).status_code == 201  # version 2
    stale = service.latest_version

    def first_version(session: Any, dataset: Any) -> Any:
        return service.get_version(session, dataset, 1)

    monkeypatch.setattr(service, "_latest_locked", first_version)
    before = _case_rows()
    reply = browser.post(base + "/cases", json=QUESTION)
    assert reply.status_code == 409 and reply.json["code"] == "VERSION_CONFLICT", reply.json
    assert _case_rows() == before
    monkeypatch.undo()
    assert stale is service.latest_version
    assert browser.get(base).json["version"] == 2
