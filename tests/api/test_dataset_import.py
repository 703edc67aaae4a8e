"""Import (CSV and JSONL, preview, mapping, all-or-nothing), export round trips, coverage."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.datasets.models import Case, DatasetVersion
from assay.extensions import db
from tests.factories import Factory, Session

MAPPING = {"variables": {"City": "city", "Topic": "topic"}, "expected": "Answer",
           "tags": "Tags", "difficulty": "Level"}
GOOD_CSV = ("City,Topic,Answer,Tags,Level\n"
            "Paris,food,Croissant,\"fr,food\",easy\n"
            "Oslo,weather,Cold,no,hard\n"
            "Lima,\"multi\nline\",Ceviche,,\n")


@pytest.fixture
def ctx(factory: Factory) -> tuple[Session, str]:
    user = factory.user()
    project = factory.project(user, "Imports")
    browser = factory.login(user)
    reply = browser.post(f"/api/projects/{project.id}/datasets",
                         json={"name": "Cases", "kind": "cases"})
    assert reply.status_code == 201, reply.json
    return browser, f"/api/projects/{project.id}/datasets/{reply.json['id']}"


def _counts() -> tuple[int, int]:
    with db.factory() as session:
        return (session.scalar(select(func.count()).select_from(Case)) or 0,
                session.scalar(select(func.count()).select_from(DatasetVersion)) or 0)


def _import(browser: Session, base: str, content: str | bytes, fmt: str = "csv",
            mapping: dict[str, Any] | None = MAPPING) -> Any:
    body: dict[str, Any] = {"format": fmt}
    if mapping is not None:
        body["mapping"] = mapping
    if isinstance(content, bytes):
        body.update(content=base64.b64encode(content).decode(), base64=True)
    else:
        body["content"] = content
    return browser.post(base + "/import", json=body)


def test_preview_shows_columns_and_the_first_ten_rows(ctx: tuple[Session, str]) -> None:
    browser, base = ctx
    content = "q,a\n" + "".join(f"Q{i},A{i}\n" for i in range(25))
    reply = browser.post(base + "/import/preview", json={"format": "csv", "content": content})
    assert reply.status_code == 200, reply.json
    assert reply.json["columns"] == ["q", "a"] and reply.json["total_rows"] == 25
    assert len(reply.json["rows"]) == 10 and reply.json["rows"][0] == {"q": "Q0", "a": "A0"}
    assert _counts()[0] == 0


def test_csv_import_makes_one_version_with_every_row(ctx: tuple[Session, str]) -> None:
    browser, base = ctx
    reply = _import(browser, base, GOOD_CSV.encode("utf-8-sig"))  # a BOM is fine
    assert reply.status_code == 201, reply.json
    assert reply.json["number"] == 2 and reply.json["case_count"] == 3
    cases = browser.get(base + "/cases").json["items"]
    assert cases[0]["input"] == {"city": "Paris", "topic": "food"}
    assert cases[0]["expected"] == {"output": "Croissant"}
    assert cases[0]["tags"] == ["fr", "food"] and cases[0]["difficulty"] == "easy"
    assert cases[2]["input"]["topic"] == "multi\nline" and cases[2]["difficulty"] is None


def test_jsonl_in_edison_format_and_mapped(ctx: tuple[Session, str]) -> None:
    browser, base = ctx
    rows = [{"input": {"city": "Rome"}, "expected": {"output": "Pasta"}, "tags": ["it"]},
            {"input": {"city": "Bern"}, "expected": None, "difficulty": "medium"}]
    content = "\n".join(json.dumps(r) for r in rows) + "\n\n"
    reply = _import(browser, base, content, "jsonl", None)
    assert reply.status_code == 201, reply.json
    mapped = json.dumps({"town": "Kyiv", "food": "Borscht"}) + "\n"
    reply = _import(browser, base, mapped, "jsonl",
                    {"variables": {"town": "city"}, "expected": "food"})
    assert reply.status_code == 201, reply.json
    cases = browser.get(base + "/cases").json["items"]
    assert [c["input"]["city"] for c in cases] == ["Rome", "Bern", "Kyiv"]
    assert cases[2]["expected"] == {"output": "Borscht"}


def _refused(reply: Any, before: tuple[int, int], status: int = 422) -> dict[str, Any]:
    assert reply.status_code == status, reply.get_data(as_text=True)[:500]
    assert _counts() == before, "a refused import wrote something"
    return dict(reply.json)


def test_every_row_is_checked_and_nothing_is_written_on_error(ctx: tuple[Session, str]) -> None:
    browser, base = ctx
    before = _counts()
    content = ("City,Topic,Answer,Tags,Level\n"
               "Paris,food,Croissant,,easy\n"
               "Oslo,weather,Cold,,extreme\n"
               "Lima,food,Ceviche,,\n"
               "Quito\n")
    body = _refused(_import(browser, base, content), before)
    assert body["errors"]["rows"] == [
        {"row": 5, "field": None, "reason": "has 1 cells for 5 columns"}]
    content = content.rsplit("Quito", 1)[0]
    body = _refused(_import(browser, base, content), before)
    assert body["errors"]["rows"] == [{"row": 3, "field": "difficulty",
                                       "reason": "must be one of easy, medium, hard or null"}]


BAD_FILES: list[tuple[str, str | bytes, str]] = [
    ("csv", "Caf\xe9,x\n1,2\n".encode("latin-1"), "not UTF-8"),
    ("csv", "", "empty"),
    ("csv", "   \n\n", "empty"),
    ("csv", "City,Topic,Answer,Tags,Level\n", "no rows"),
    ("csv", ",Topic\nParis,food\n", "header"),
    ("csv", "City,City\nParis,Lyon\n", "Duplicate column"),
    ("csv", "City,\"Topic\nParis,food\n", "cannot be read"),
    ("jsonl", "", "empty"),
]


@pytest.mark.parametrize(("fmt", "content", "message"), BAD_FILES)
def test_bad_files(ctx: tuple[Session, str], fmt: str, content: str | bytes,
                   message: str) -> None:
    browser, base = ctx
    before = _counts()
    body = _refused(_import(browser, base, content, fmt), before)
    assert message in body["message"], body


def test_bad_json_lines_are_reported_by_line(ctx: tuple[Session, str]) -> None:
    browser, base = ctx
    before = _counts()
    content = ('{"input": {"city": "Rome"}}\n{"input": {"city": \n\n[1, 2]\n'
               '{"input": {"city": "X"}, "extra": 1}\n')
    body = _refused(_import(browser, base, content, "jsonl", None), before)
    rows = body["errors"]["rows"]
    assert [(r["row"], r["field"]) for r in rows] == [(2, None), (4, None)]
    assert "not valid JSON" in rows[0]["reason"] and "object" in rows[1]["reason"]
    content = '{"input": {"city": "X"}, "extra": 1}\n'
    body = _refused(_import(browser, base, content, "jsonl", None), before)
    assert body["errors"]["rows"] == [{"row": 1, "field": "extra", "reason": "unknown key"}]


def test_mapping_errors(ctx: tuple[Session, str]) -> None:
    browser, base = ctx
    assert _import(browser, base, GOOD_CSV).status_code == 201  # variables: city, topic
    before = _counts()
    for mapping, field, text in [
            ({"variables": {"Nope": "city"}}, "mapping.variables", "Unknown column 'Nope'"),
            ({"variables": {"City": "country"}}, "mapping.variables",
             "Unknown variable 'country'"),
            ({"variables": {"City": "city"}, "expected": "Missing"}, "mapping.expected",
             "Unknown column 'Missing'"),
            ({"variables": {}}, "mapping.variables", "Map at least one column")]:
        body = _refused(_import(browser, base, GOOD_CSV, mapping=mapping), before)
        assert any(text in m for m in body["errors"]["json"][field]), body
    body = _refused(_import(browser, base, GOOD_CSV, mapping=None), before)
    assert "mapping" in body["errors"]["json"]


def test_size_and_row_limits(ctx: tuple[Session, str]) -> None:
    browser, base = ctx
    before = _counts()
    too_many = "City,Topic\n" + "a,b\n" * 10_001
    body = _refused(_import(browser, base, too_many, mapping={
        "variables": {"City": "city"}}), before)
    assert "more than 10000 rows" in body["message"]
    oversized = b"City,Topic\n" + b"a,b\n" * 2_600_000  # 10.4 MB
    body = _refused(_import(browser, base, oversized), before, status=413)
    assert "larger than 10 MB" in body["message"]
    reply = browser.post(base + "/import", data=b"x" * 16_000_000,
                         content_type="application/json")
    _refused(reply, before, status=413)
    exactly = "City,Topic\n" + "a,b\n" * 10_000
    reply = _import(browser, base, exactly, mapping={"variables": {"City": "city",
                                                                   "Topic": "topic"}})
    assert reply.status_code == 201 and reply.json["case_count"] == 10_000


EXPORT_TYPES = {"csv": "text/csv", "jsonl": "application/x-ndjson"}


def export(browser: Session, base: str, fmt: str, **query: Any) -> str:
    """The exported file's text, checked to be a streamed download of its real type."""
    reply = browser.get(base + "/export", query_string={"format": fmt, **query})
    assert reply.status_code == 200, reply.get_data(as_text=True)
    assert reply.is_streamed and reply.mimetype == EXPORT_TYPES[fmt]
    assert reply.headers["Content-Disposition"].startswith("attachment; filename=")
    assert reply.headers["Content-Disposition"].endswith(f'.{fmt}"')
    return reply.get_data(as_text=True)


def csv_mapping(variables: list[str]) -> dict[str, Any]:
    """An exported CSV's own mapping: every column to its own name."""
    return {"variables": {v: v for v in variables}, "expected": "expected", "tags": "tags",
            "difficulty": "difficulty", "metadata": "metadata"}


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_round_trips(ctx: tuple[Session, str], fmt: str) -> None:
    browser, base = ctx
    assert _import(browser, base, GOOD_CSV).status_code == 201
    exported = export(browser, base, fmt)
    mapping = csv_mapping(["city", "topic"]) if fmt == "csv" else None
    reply = _import(browser, base, exported, fmt, mapping)
    assert reply.status_code == 201, reply.json
    cases = browser.get(base + "/cases", query_string={"page_size": 100}).json["items"]
    keys = ("input", "expected", "tags", "difficulty", "metadata", "trace")
    assert [{k: c[k] for k in keys} for c in cases[3:]] == [
        {k: c[k] for k in keys} for c in cases[:3]]
    assert export(browser, base, fmt, version=2) == exported


def test_conversations_export_as_jsonl_only(factory: Factory) -> None:
    user = factory.user()
    project = factory.project(user, "Talk")
    browser = factory.login(user)
    made = browser.post(f"/api/projects/{project.id}/datasets", json={
        "name": "Talk", "kind": "conversations", "cases": [{
            "input": {"messages": [{"role": "user", "content": "Hi"}]},
            "expected": {"turns": ["Hello"]}}]}).json
    base = f"/api/projects/{project.id}/datasets/{made['id']}"
    assert browser.get(base + "/export", query_string={"format": "csv"}).status_code == 422
    assert _import(browser, base, export(browser, base, "jsonl"), "jsonl",
                   None).status_code == 201


def test_a_dataset_named_in_any_script_exports_with_a_latin1_header(factory: Factory) -> None:
    """gunicorn refuses a header that is not Latin-1 (a 500 under `assay serve`, found by the
    hour-long soak's fuzzer): the name goes as RFC 6266's filename* beside an ASCII one."""
    user = factory.user()
    project = factory.project(user, "Names")
    browser = factory.login(user)
    made = browser.post(f"/api/projects/{project.id}/datasets", json={
        "name": "Données 数据 ǅ", "kind": "questions",
        "cases": [{"input": {"question": "Hi"}}]}).json
    assert "id" in made, made
    base = f"/api/projects/{project.id}/datasets/{made['id']}"
    for fmt in EXPORT_TYPES:
        header = browser.get(base + "/export", query_string={"format": fmt}).headers[
            "Content-Disposition"]
        header.encode("latin-1")  # what gunicorn requires of every header value
        assert header.startswith('attachment; filename="Donn-es') and header.isascii()
        assert "filename*=UTF-8''Donn%C3%A9es-%E6%95%B0%E6%8D%AE-%C7%85-v1." + fmt in header


def test_coverage(ctx: tuple[Session, str]) -> None:
    browser, base = ctx
    assert _import(browser, base, GOOD_CSV).status_code == 201
    reply = browser.get(base + "/coverage")
    assert reply.status_code == 200, reply.json
    data = reply.json
    assert data["case_count"] == 3 and data["version"] == 2
    assert {r["key"]: r["count"] for r in data["by_tag"]} == {
        "fr": 1, "food": 1, "no": 1, "(untagged)": 1}
    assert [r["key"] for r in data["by_length"]] == ["XS", "S", "M", "L", "XL"]
    assert data["by_length"][0]["count"] == 3
    assert {r["key"]: r["count"] for r in data["by_difficulty"]} == {
        "easy": 1, "medium": 0, "hard": 1, "unset": 1}
    assert sum(r["count"] for r in data["by_language"]) == 3
    assert browser.get(base + "/coverage", query_string={"version": 1}).json["case_count"] == 0
