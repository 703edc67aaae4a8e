"""Dataset import as multipart/form-data, as `curl -F file=@cases.csv` and a browser's
FormData send it (issue 15 item 11): preview, import, an export that goes back in, and bad
forms refused with a clear 4xx and nothing written."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from tests.api.test_dataset_import import (
    GOOD_CSV,
    MAPPING,
    _counts,
    _refused,
    csv_mapping,
    ctx,  # noqa: F401 (a fixture)
    export,
)
from tests.factories import Session

FORM = "multipart/form-data"


def _post(browser: Session, url: str, **fields: Any) -> Any:
    return browser.post(url, data=fields, content_type=FORM)


def _file(data: str | bytes, name: str = "cases.csv") -> tuple[io.BytesIO, str]:
    return io.BytesIO(data.encode() if isinstance(data, str) else data), name


def test_preview_and_import_a_file_sent_as_a_form(ctx: tuple[Session, str]) -> None:  # noqa: F811
    browser, base = ctx
    preview = _post(browser, base + "/import/preview", file=_file(GOOD_CSV))
    assert preview.status_code == 200, preview.json
    assert preview.json["format"] == "csv" and preview.json["total_rows"] == 3
    assert preview.json["columns"] == ["City", "Topic", "Answer", "Tags", "Level"]
    reply = _post(browser, base + "/import", file=_file(GOOD_CSV),
                  mapping=json.dumps(MAPPING), note="from curl")
    assert reply.status_code == 201, reply.json
    assert (reply.json["case_count"], reply.json["note"]) == (3, "from curl")
    cases = browser.get(base + "/cases").json["items"]
    assert cases[0]["input"] == {"city": "Paris", "topic": "food"}
    assert cases[0]["tags"] == ["fr", "food"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_an_export_uploaded_as_a_file_round_trips(ctx: tuple[Session, str],  # noqa: F811
                                                  fmt: str) -> None:
    browser, base = ctx
    assert _post(browser, base + "/import", file=_file(GOOD_CSV),
                 mapping=json.dumps(MAPPING)).status_code == 201
    exported = export(browser, base, fmt)
    fields: dict[str, Any] = {"file": _file(exported, f"Cases-v2.{fmt}")}
    if fmt == "csv":
        fields["mapping"] = json.dumps(csv_mapping(["city", "topic"]))
    reply = _post(browser, base + "/import", **fields)
    assert reply.status_code == 201, reply.json
    items = browser.get(base + "/cases", query_string={"page_size": 100}).json["items"]
    keys = ("input", "expected", "tags", "difficulty", "metadata")
    assert [{k: c[k] for k in keys} for c in items[3:]] == [
        {k: c[k] for k in keys} for c in items[:3]]


def test_the_format_field_overrides_the_file_name(ctx: tuple[Session, str]) -> None:  # noqa: F811
    browser, base = ctx
    reply = _post(browser, base + "/import/preview", file=_file('{"input": {"a": "b"}}\n',
                                                                 "rows.txt"), format="jsonl")
    assert reply.status_code == 200 and reply.json["format"] == "jsonl", reply.json


BAD_FORMS: list[tuple[str, dict[str, Any], str, str]] = [
    ("no file", {"mapping": json.dumps(MAPPING)}, "file", "Missing data"),
    ("a wrong field", {"upload": _file(GOOD_CSV), "mapping": json.dumps(MAPPING)}, "upload",
     "Unknown field"),
    ("a value, not a file", {"file": GOOD_CSV, "mapping": json.dumps(MAPPING)}, "file",
     "Send a file"),
    ("a mapping that is no JSON", {"file": _file(GOOD_CSV), "mapping": "{city"}, "mapping",
     "Not valid JSON"),
    ("an unknown format", {"file": _file(GOOD_CSV, "cases.txt"),
                           "mapping": json.dumps(MAPPING)}, "format", "csv or jsonl"),
    ("a file that is not text", {"file": _file(b"\x89PNG\r\n\x1a\n\xff\xfe", "cases.csv"),
                                 "mapping": json.dumps(MAPPING)}, "file", "not UTF-8"),
    ("a CSV with a broken quote", {"file": _file('City,"Topic\nParis,food\n'),
                                   "mapping": json.dumps(MAPPING)}, "file", "cannot be read"),
]


@pytest.mark.parametrize(("label", "fields", "field", "message"), BAD_FORMS,
                         ids=[b[0] for b in BAD_FORMS])
def test_bad_forms_are_422_and_write_nothing(ctx: tuple[Session, str],  # noqa: F811
                                             label: str, fields: dict[str, Any], field: str,
                                             message: str) -> None:
    browser, base = ctx
    for value in fields.values():  # a parametrized BytesIO is read once per run
        if isinstance(value, tuple):
            value[0].seek(0)
    before = _counts()
    body = _refused(_post(browser, base + "/import", **fields), before)
    reasons = body["errors"]["files"][field]
    assert any(message in reason for reason in reasons), body


def test_a_file_over_10_mb_is_413_and_writes_nothing(ctx: tuple[Session, str]) -> None:  # noqa: F811
    browser, base = ctx
    before = _counts()
    big = b"City,Topic\n" + b"a,b\n" * 2_600_000  # 10.4 MB: over the file limit
    body = _refused(_post(browser, base + "/import", file=_file(big),
                          mapping=json.dumps(MAPPING)), before, status=413)
    assert "larger than 10 MB" in body["message"]
    huge = b"x" * 16_000_000  # over the body limit: refused before it is read
    body = _refused(_post(browser, base + "/import", file=_file(huge)), before, status=413)
    assert body["code"] == "PAYLOAD_TOO_LARGE"
