"""Tags on datasets themselves (the tag manager), the list filtered by tag and by the
difficulty of cases, several cases added in one version, and where a dataset came from."""

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
    project = factory.project(user, "Tags")
    return factory.login(user), project.id


def _url(project_id: int, tail: str = "") -> str:
    return f"/api/projects/{project_id}/datasets{tail}"


def _create(browser: Session, pid: int, name: str, **body: Any) -> dict[str, Any]:
    reply = browser.post(_url(pid), json={"name": name, "kind": "questions", **body})
    assert reply.status_code == 201, reply.json
    return dict(reply.json)


def _names(browser: Session, pid: int, query: str = "") -> list[str]:
    reply = browser.get(_url(pid, query))
    assert reply.status_code == 200, reply.json
    return sorted(item["name"] for item in reply.json["items"])


def _question(text: str, difficulty: str | None = None) -> dict[str, Any]:
    return {"input": {"question": text}, "difficulty": difficulty}


def test_tags_on_datasets_add_remove_rename_and_filter(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    a = _create(browser, pid, "A", tags=[" math ", "easy-set", "math"])
    assert a["tags"] == ["math", "easy-set"]  # trimmed, once each
    b = _create(browser, pid, "B", tags=["math"])
    _create(browser, pid, "C")
    assert _names(browser, pid, "?tag=math") == ["A", "B"]

    # add and remove on one dataset: the whole list is replaced
    reply = browser.patch(_url(pid, f"/{b['id']}"), json={"tags": ["math", "physics"]})
    assert reply.status_code == 200 and reply.json["tags"] == ["math", "physics"]
    reply = browser.patch(_url(pid, f"/{a['id']}"), json={"tags": ["easy-set"]})
    assert reply.json["tags"] == ["easy-set"]
    assert _names(browser, pid, "?tag=math") == ["B"]

    assert browser.get(_url(pid, "/tags")).json["items"] == [
        {"tag": "easy-set", "count": 1}, {"tag": "math", "count": 1},
        {"tag": "physics", "count": 1}]

    # rename across the project, merging into a tag a dataset already has
    reply = browser.post(_url(pid, "/tags/rename"), json={"from": "physics", "to": "math"})
    assert reply.status_code == 200 and reply.json == {"datasets": 1}
    assert browser.get(_url(pid, f"/{b['id']}")).json["tags"] == ["math"]
    reply = browser.post(_url(pid, "/tags/rename"), json={"from": "math", "to": "arith"})
    assert reply.json == {"datasets": 1}
    assert _names(browser, pid, "?tag=arith") == ["B"]
    assert _names(browser, pid, "?tag=math") == []

    reply = browser.post(_url(pid, "/tags/remove"), json={"tag": "easy-set"})
    assert reply.status_code == 200 and reply.json == {"datasets": 1}
    assert browser.get(_url(pid, f"/{a['id']}")).json["tags"] == []
    assert browser.post(_url(pid, "/tags/remove"), json={"tag": "easy-set"}).status_code == 404
    reply = browser.post(_url(pid, "/tags/rename"), json={"from": "nope", "to": "x"})
    assert reply.status_code == 404 and reply.json["errors"]["json"]["tag"]

    with db.factory() as session:
        actions = list(session.scalars(select(AuditEvent.action).where(
            AuditEvent.project_id == pid, AuditEvent.action.like("dataset.tag%"))))
    assert sorted(actions) == ["dataset.tag_removed", "dataset.tag_renamed",
                               "dataset.tag_renamed"]


def test_bad_tags_are_refused_with_the_field(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid, "A", tags=["ok"])
    reply = browser.patch(_url(pid, f"/{made['id']}"), json={"tags": ["x" * 51]})
    assert reply.status_code == 422 and "tags" in reply.json["errors"]["json"]
    reply = browser.post(_url(pid, "/tags/rename"), json={"from": "ok", "to": "  "})
    assert reply.status_code == 422 and "to" in reply.json["errors"]["json"]
    assert browser.get(_url(pid, f"/{made['id']}")).json["tags"] == ["ok"]


def test_tags_of_another_project_are_not_touched_and_viewers_cannot_change_them(
        factory: Factory, owner: tuple[Session, int]) -> None:
    browser, pid = owner
    _create(browser, pid, "Mine", tags=["shared"])
    other_owner = factory.user()
    other = factory.project(other_owner, "Other")
    theirs = factory.login(other_owner)
    _create(theirs, other.id, "Theirs", tags=["shared"])
    assert browser.post(_url(pid, "/tags/remove"), json={"tag": "shared"}).json == {
        "datasets": 1}
    assert _names(theirs, other.id, "?tag=shared") == ["Theirs"]

    with db.factory() as session:
        project = session.get(type(other), pid)
        assert project is not None
    viewer = factory.login(factory.member(project, Role.viewer))
    assert viewer.get(_url(pid, "/tags")).status_code == 200
    assert viewer.post(_url(pid, "/tags/rename"),
                       json={"from": "a", "to": "b"}).status_code == 403


def test_the_list_filters_by_the_difficulty_of_the_latest_cases(
        owner: tuple[Session, int]) -> None:
    browser, pid = owner
    hard = _create(browser, pid, "Hard", cases=[_question("q1", "hard"), _question("q2")])
    _create(browser, pid, "Easy", cases=[_question("q3", "easy")])
    _create(browser, pid, "None", cases=[_question("q4")])
    assert _names(browser, pid, "?difficulty=hard") == ["Hard"]
    assert _names(browser, pid, "?difficulty=easy") == ["Easy"]
    assert _names(browser, pid, "?difficulty=medium") == []
    # the hard case deleted: the latest version has none left
    cases = browser.get(_url(pid, f"/{hard['id']}/cases")).json["items"]
    hard_case = next(c for c in cases if c["difficulty"] == "hard")
    assert browser.delete(_url(pid, f"/{hard['id']}/cases/{hard_case['id']}")).status_code == 200
    assert _names(browser, pid, "?difficulty=hard") == []
    reply = browser.get(_url(pid, "?difficulty=extreme"))
    assert reply.status_code == 422 and "difficulty" in reply.json["errors"]["query"]


def _case_rows(dataset_id: int) -> int:
    with db.factory() as session:
        return session.scalar(select(func.count()).select_from(Case).where(
            Case.dataset_id == dataset_id)) or 0


def test_several_cases_added_at_once_make_one_version(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid, "Bulk", cases=[_question("first")])
    reply = browser.post(_url(pid, f"/{made['id']}/cases/bulk"), json={
        "cases": [_question("second", "easy"),
                  {"input": {"question": "third"}, "expected": {"answer": "3"},
                   "tags": ["t"], "difficulty": "hard"}],
        "note": "two by hand"})
    assert reply.status_code == 201, reply.json
    assert reply.json["version"]["number"] == 2
    assert reply.json["version"]["case_count"] == 3
    assert reply.json["version"]["note"] == "two by hand"
    assert [c["position"] for c in reply.json["cases"]] == [1, 2]
    assert reply.json["cases"][1]["expected"] == {"answer": "3"}
    versions = browser.get(_url(pid, f"/{made['id']}/versions")).json
    assert versions["total"] == 2
    got = browser.get(_url(pid, f"/{made['id']}")).json
    assert (got["version"], got["case_count"]) == (2, 3)
    with db.factory() as session:
        events = session.scalars(select(AuditEvent).where(
            AuditEvent.action == "dataset.cases_added", AuditEvent.project_id == pid)).all()
        assert [e.data["cases"] for e in events] == [2]


def test_each_added_case_keeps_its_own_row_and_position(owner: tuple[Session, int]) -> None:
    """Ids of a bulk insert come back in row order (SQLite reads them back after an
    executemany): with another dataset's cases written in between, every position still holds
    the case sent for it."""
    browser, pid = owner
    made = _create(browser, pid, "Mine", cases=[_question(f"mine {i}") for i in range(3)])
    _create(browser, pid, "Other", cases=[_question(f"other {i}") for i in range(4)])
    added = [_question(f"added {i}", ("easy", "hard")[i % 2]) for i in range(25)]
    reply = browser.post(_url(pid, f"/{made['id']}/cases/bulk"), json={"cases": added})
    assert reply.status_code == 201, reply.json
    assert [(c["position"], c["input"]["question"], c["difficulty"]) for c in reply.json["cases"]
            ] == [(3 + i, f"added {i}", ("easy", "hard")[i % 2]) for i in range(25)]
    with db.factory() as session:
        rows = dict(session.execute(select(Case.id, Case.input).where(
            Case.dataset_id == made["id"])).all())
    assert {c["id"]: c["input"] for c in reply.json["cases"]}.items() <= rows.items()
    assert sorted(r["question"] for r in rows.values()) == sorted(
        [f"mine {i}" for i in range(3)] + [f"added {i}" for i in range(25)])


def test_bad_cases_in_a_bulk_add_are_named_and_nothing_is_written(
        owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid, "Bulk", cases=[_question("first")])
    reply = browser.post(_url(pid, f"/{made['id']}/cases/bulk"), json={"cases": [
        _question("fine"), {"input": {"question": "  "}},
        {"input": {"question": "x"}, "difficulty": "extreme"}]})
    assert reply.status_code == 422
    errors = reply.json["errors"]["json"]["cases"]
    assert set(errors) == {"1", "2"}
    assert "input.question" in errors["1"] and "difficulty" in errors["2"]
    assert browser.post(_url(pid, f"/{made['id']}/cases/bulk"),
                        json={"cases": []}).status_code == 422
    got = browser.get(_url(pid, f"/{made['id']}")).json
    assert (got["version"], got["case_count"]) == (1, 1)
    assert _case_rows(made["id"]) == 1


def test_a_bulk_row_is_held_to_the_case_schema_by_row_and_field(
        owner: tuple[Session, int]) -> None:
    """Each row is a NewCase, as the document says: a field it does not know or of the wrong
    type is refused by row index and field, with the kind's own reasons for other rows in
    the same answer, and nothing is written."""
    browser, pid = owner
    made = _create(browser, pid, "Rows", cases=[_question("first")])
    url = _url(pid, f"/{made['id']}/cases/bulk")
    reply = browser.post(url, json={"cases": [
        _question("fine"),
        {**_question("extra"), "answer": "42"},  # `expected` holds the answer, not the row
        {"input": {"question": "   "}, "metadata": ["not", "an", "object"]},
        {"input": {"question": "tags"}, "tags": "one,two"}]})
    assert reply.status_code == 422, reply.json
    errors = reply.json["errors"]["json"]["cases"]
    assert errors == {
        "1": {"answer": ["Unknown field."]},
        "2": {"input.question": ["question must not be empty"],
              "metadata": ["must be an object"]},
        "3": {"tags": ["at most 20 tags of 1 to 50 characters"]},
    }
    assert reply.json["code"] == "VALIDATION_ERROR"
    assert reply.json["message"] == "Some cases are not valid"
    reply = browser.post(url, json={"cases": [_question("fine"), "a question"]})
    assert reply.status_code == 422
    assert reply.json["errors"]["json"]["cases"] == {"1": ["Invalid input type."]}
    got = browser.get(_url(pid, f"/{made['id']}")).json
    assert (got["version"], got["case_count"]) == (1, 1)
    assert _case_rows(made["id"]) == 1
    # every field of the document's NewCase is taken, as the single-case endpoint takes it
    reply = browser.post(url, json={"cases": [{
        "input": {"question": "all"}, "expected": {"answer": "yes"}, "trace": None,
        "tags": ["t"], "difficulty": "easy", "metadata": {"source": "hand"}}]})
    assert reply.status_code == 201, reply.json
    assert reply.json["cases"][0]["metadata"] == {"source": "hand"}


def test_the_document_types_a_bulk_row_as_a_case(client: Any) -> None:
    """The SPA's generated types say what a row holds: a case, without the version's note."""
    schemas = client.get("/api/openapi.json").json["components"]["schemas"]
    assert schemas["CaseBulk"]["properties"]["cases"]["items"] == {
        "$ref": "#/components/schemas/NewCase"}
    row = schemas["NewCase"]
    assert set(row["properties"]) == set(schemas["CaseWrite"]["properties"]) - {"note"}
    assert row["properties"]["input"] == schemas["CaseWrite"]["properties"]["input"]
    assert row["additionalProperties"] is False


def test_a_new_datasets_cases_are_held_to_the_case_schema(
        owner: tuple[Session, int]) -> None:
    """Initial cases are rows of the same NewCase as the bulk add's: a bad row is refused
    by index and field, with the kind's own reasons, and no dataset is made."""
    browser, pid = owner
    reply = browser.post(_url(pid), json={"name": "Typed", "kind": "questions", "cases": [
        _question("fine"), {**_question("extra"), "answer": "42"},
        {"input": {"question": "  "}}]})
    assert reply.status_code == 422, reply.json
    assert reply.json["errors"]["json"]["cases"] == {
        "1": {"answer": ["Unknown field."]},
        "2": {"input.question": ["question must not be empty"]}}
    assert "Typed" not in _names(browser, pid)
    reply = browser.post(_url(pid), json={"name": "Typed", "kind": "questions",
                                          "cases": [_question("fine"), 7]})
    assert reply.status_code == 422
    assert reply.json["errors"]["json"]["cases"] == {"1": ["Invalid input type."]}
    made = _create(browser, pid, "Typed", cases=[{**_question("all", "easy"),
                                                  "metadata": {"source": "hand"}}])
    assert (made["version"], made["case_count"]) == (1, 1)
    schemas = browser.get("/api/openapi.json").json["components"]["schemas"]
    assert schemas["DatasetCreate"]["properties"]["cases"]["items"] == {
        "$ref": "#/components/schemas/NewCase"}


def test_each_kind_takes_its_shape_in_a_bulk_add(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid, "Vars", kind="cases")
    good = {"input": {"city": "Oslo"}, "expected": {"output": "Fish"}}
    reply = browser.post(_url(pid, f"/{made['id']}/cases/bulk"), json={
        "cases": [good, {"input": {"1bad": "x"}}]})
    assert reply.status_code == 422 and "input" in reply.json["errors"]["json"]["cases"]["1"]
    reply = browser.post(_url(pid, f"/{made['id']}/cases/bulk"), json={"cases": [good, good]})
    assert reply.status_code == 201 and reply.json["version"]["case_count"] == 2


def test_origin_of_a_dataset_made_by_hand(owner: tuple[Session, int]) -> None:
    browser, pid = owner
    made = _create(browser, pid, "Hand")
    assert made["origin"] == {"type": "manual"}
    with db.factory() as session:
        dataset = session.get(Dataset, made["id"])
        assert dataset is not None
        dataset.origin = None  # as a dataset made before origins were recorded
        session.commit()
    assert browser.get(_url(pid, f"/{made['id']}")).json["origin"] is None
